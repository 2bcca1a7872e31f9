package main_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestForecastPrunes: under early-stop method forecast, the trial whose curve is forecast
// to end far below the best value reached at max is pruned after grace, before its 7th
// epoch; the trials that end best run to their ends and are never stopped; each decision is
// in results.json with its figures.
func TestForecastPrunes(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("adapt/forecast.yml", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	_, got := forecastResults(t, e)
	loser := got["loser"]
	if got["best"].Status != results.StatusOK || got["better"].Status != results.StatusOK || loser.Status != results.StatusPruned {
		t.Fatalf("statuses best %s, better %s, loser %s\n%v", got["best"].Status, got["better"].Status, loser.Status, r)
	}
	if !strings.Contains(loser.Reason, "forecast: acc at step ") || !strings.Contains(loser.Reason, "than 0.8297 (the best value reached at step 12)") {
		t.Errorf("loser's reason %q", loser.Reason)
	}
	if strings.Contains(r.stdout, "acc=0.99") {
		t.Errorf("loser ran past its 6th epoch\n%v", r)
	}
	fs := loser.Forecasts
	if len(fs) == 0 {
		t.Fatal("no forecast decision recorded for loser")
	}
	last := fs[len(fs)-1]
	if last.Decision != "stop" || last.At != 12 || last.Step < 4 || last.Step > 6 || last.Chance >= 0.05 || last.Incumbent == nil ||
		*last.Incumbent != 0.82975 || last.IncumbentFrom != "reached" || !(last.Low <= last.Median && last.Median <= last.High) {
		t.Errorf("loser's last decision %+v", last)
	}
	for _, name := range []string{"best", "better"} {
		for _, f := range got[name].Forecasts {
			if f.Decision != "continue" || f.Step < 4 {
				t.Errorf("%s: decision %+v", name, f)
			}
		}
	}
	if len(got["better"].Forecasts) == 0 {
		t.Error("no forecast decision recorded for better")
	}
}

// TestCheckForecast: check prints a forecast block's rule with its figures, and refuses a
// bad value at its line and column.
func TestCheckForecast(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("check", testdata("adapt/forecast.yml"))
	r.wantCode(t, 0)
	want := "early stop: forecast on acc (higher is better), from step 4, of the value at step 12 (all 11 curve families): a trial stops when its chance of ending better than the best is below 0.05"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("check does not say %q\n%v", want, r)
	}
	e.writeFile("bad.yml", "tasks:\n  - name: sweep\n    early-stop: {method: forecast, max: 9, min-chance: 0.7}\n    parallel-tasks: [{cmd: a}]\n")
	r = e.run("check", "bad.yml")
	r.wantCode(t, 2)
	if !strings.Contains(r.stderr, "bad.yml:3:56: early-stop: min-chance: want a number from 0 to 0.5") {
		t.Errorf("check's refusal\n%v", r)
	}
}

// orderTrials are five curves of 20 epochs: slow-best starts slowest and ends best (0.838),
// fast-low leads until about epoch 8 and levels off at 0.80 (they cross), the others end
// lower still.
var orderTrials = []string{
	"      - {name: slow-best, cmd: sh CURVE 0.95 0.5 0.5 20}\n",
	"      - {name: fast-low, cmd: sh CURVE exp 0.80 0.4 0.6 20}\n",
	"      - {name: mid, cmd: sh CURVE 0.78 0.4 0.7 20}\n",
	"      - {name: low, cmd: sh CURVE 0.65 0.3 0.7 20}\n",
	"      - {name: worst, cmd: sh CURVE 0.5 0.2 0.7 20}\n",
}

// TestForecastOrderFree: the same five trials, written best-first and worst-first (each
// with order: file) and started in the default (shuffled) order, all at once: forecast
// finds the same best trial each time, never stops it, and stops some of the others.
func TestForecastOrderFree(t *testing.T) {
	t.Parallel()
	worstFirst := slices.Clone(orderTrials)
	slices.Reverse(worstFirst)
	for _, tc := range []struct {
		name, order string
		trials      []string
	}{
		{"best-first", "    order: file\n", orderTrials},
		{"worst-first", "    order: file\n", worstFirst},
		{"shuffled", "", orderTrials},
	} {
		e := newE2E(t)
		text := "config:\n  objective: {metric: acc, mode: max}\ntasks:\n  - name: sweep\n" + tc.order +
			"    early-stop: {method: forecast, grace: 3, max: 20}\n    parallel-tasks:\n" + strings.Join(tc.trials, "")
		e.writeFile("sweep.yml", strings.ReplaceAll(text, "CURVE", testdata("adapt/curve.sh")))
		r := e.run("--log-dir", "logs", "--results", "results.json", "sweep.yml")
		r.wantCode(t, 0)
		res, _ := forecastResults(t, e)
		epochs, pruned := 0, 0
		for _, tr := range res.Tasks {
			epochs += len(tr.MetricSeries["acc"])
			if tr.Status == results.StatusPruned {
				pruned++
			}
			if tr.Name == "slow-best" && tr.Status != results.StatusOK {
				t.Errorf("%s: the best trial ended %s: %s", tc.name, tr.Status, tr.Reason)
			}
		}
		if res.Best != "slow-best" || pruned == 0 {
			t.Errorf("%s: best %q, %d pruned\n%v", tc.name, res.Best, pruned, r)
		}
		t.Logf("%s: %d epochs of 100, %d pruned", tc.name, epochs, pruned)
	}
}

// TestForecastFreezeThaw: with pause-below and checkpoints, a trial forecast to lose but
// not hopeless is paused at its checkpoint while another waits, and the waiting one runs.
// Then, once none waits, the paused one ends pruned where it waits, never resumed: when the
// one that ran ended below the best, the value to beat did not move in its favour since its
// pause; when it raised the value to beat out of the paused one's reach, its chance fell
// (below min-chance, or, with the reference that best became, to 1e-4: it did not rise).
func TestForecastFreezeThaw(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(testdata("adapt/freeze.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		last       string
		lastStatus results.Status // 0.85 is itself a loser, stopped
		status     results.Status // behind's
		why        string         // why behind ended where it waited
	}{{"0.85", results.StatusPruned, results.StatusPruned, "did not rise above"},
		{"0.95", results.StatusOK, results.StatusPruned, "fell below min-chance 1e-06 while it was paused|did not rise above"}} {
		e := newE2E(t)
		yml := strings.NewReplacer("CKPT", testdata("adapt/ckpt-curve.sh"), "LAST", tc.last).Replace(string(text))
		e.writeFile("freeze.yml", yml)
		r := e.run("--log-dir", "logs", "--results", "results.json", "freeze.yml")
		r.wantCode(t, 0)
		_, got := forecastResults(t, e)
		behind := got["behind"]
		if got["best"].Status != results.StatusOK || got["last"].Status != tc.lastStatus || behind.Status != tc.status {
			t.Errorf("last %s: best %s, last %s, behind %s (%s), want last %s, behind %s\n%v", tc.last, got["best"].Status, got["last"].Status,
				behind.Status, behind.Reason, tc.lastStatus, tc.status, r)
		}
		// Paused at its first kept copy once grace (5) let the rule judge it, or the one after
		// when its next epoch landed before the pause did (a loaded machine): never run on to
		// its last (12).
		if n := len(behind.MetricSeries["acc"]); n < 5 || n >= 12 {
			t.Errorf("last %s: behind ran %d epochs, want it paused after 5 and before its 12th", tc.last, n)
		}
		if !slices.ContainsFunc(behind.Forecasts, func(f results.Forecast) bool { return f.Decision == "pause" }) {
			t.Errorf("last %s: behind's decisions %+v: none paused it", tc.last, behind.Forecasts)
		}
		paused, lastStarted := strings.Index(r.stdout, "[behind] paused"), strings.Index(r.stdout, "[last] started")
		resumed := strings.Index(r.stdout, "[behind] resumed after epoch")
		switch {
		case paused < 0 || lastStarted < paused:
			t.Errorf("last %s: want behind paused, then last started\n%v", tc.last, r)
		case tc.status == results.StatusOK && resumed < lastStarted:
			t.Errorf("last %s: want behind resumed after last started\n%v", tc.last, r)
		case tc.status == results.StatusPruned && (resumed >= 0 || !slices.ContainsFunc(strings.Split(tc.why, "|"), func(w string) bool { return strings.Contains(behind.Reason, w) })):
			t.Errorf("last %s: behind resumed, or its reason %q does not say why it ended\n%v", tc.last, behind.Reason, r)
		}
	}
}

// forecastResults is the run's results.json, and its tasks by name.
func forecastResults(t *testing.T, e *e2e) (results.Run, map[string]results.Task) {
	t.Helper()
	var res results.Run
	if err := json.Unmarshal([]byte(e.read("results.json")), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]results.Task{}
	for _, tr := range res.Tasks {
		got[tr.Name] = tr
	}
	return res, got
}
