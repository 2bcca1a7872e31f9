package main_test

// End-to-end tests of the early-stopping rules that pause trials at their checkpoints and
// resume them (issue 27, points 3, 4 and 5): sha, hyperband and pbt, with a real training
// script that checkpoints (testdata/rounds/train.py: scikit-learn's partial_fit, its model
// pickled each epoch, resumed from it when runall says so).

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/internal/eventually"
)

// roundsResults is what these tests read of a results file.
type roundsResults struct {
	Tasks []struct {
		Name         string               `json:"name"`
		Status       string               `json:"status"`
		Reason       string               `json:"reason"`
		Attempts     int                  `json:"attempts"`
		Metrics      map[string]float64   `json:"metrics"`
		MetricSeries map[string][]float64 `json:"metric_series"`
		Params       map[string]string    `json:"params"`
		Initial      map[string]string    `json:"initial_params"`
		Resumes      []struct {
			Step int `json:"step"`
		} `json:"resumes"`
		Lineage []struct {
			Step   int               `json:"step"`
			From   string            `json:"from"`
			Params map[string]string `json:"params"`
		} `json:"lineage"`
	} `json:"tasks"`
}

func (e *e2e) roundsResults(t *testing.T, name string) roundsResults {
	t.Helper()
	var r roundsResults
	if err := json.Unmarshal([]byte(e.read(name)), &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// statuses maps each trial to its status and, when pruned, the round it was pruned at.
func (r roundsResults) statuses() map[string]string {
	out := map[string]string{}
	for _, tr := range r.Tasks {
		s := tr.Status
		if at := strings.Index(tr.Reason, " at step "); at >= 0 && tr.Status == "pruned" {
			s += strings.Fields(tr.Reason[at:])[2]
		}
		out[tr.Name] = s
	}
	return out
}

// roundsE2E is an e2e whose task files find train.py and a python with scikit-learn.
func roundsE2E(t *testing.T) (*e2e, string) {
	e := newE2E(t)
	python := pythonWith(t, "sklearn", "python3-sklearn")
	e.env = append(e.env, "PYTHON="+python, "SCRIPTS="+testdata("rounds"), "WORK="+e.path("work.txt"), "OMP_NUM_THREADS=1")
	return e, python
}

// TestSHAPausesAndResumes (issue 27, point 3): sha pauses every trial at its checkpoint at
// each rung (status paused, its room to the next trial), resumes the best third from their
// checkpoints, and prunes the rest; the trials written best first end exactly as written
// worst first; the trial that ran to its end has the curve of a run never paused.
func TestSHAPausesAndResumes(t *testing.T) {
	t.Parallel()
	e, python := roundsE2E(t)
	var first map[string]string
	for i, file := range []string{"rounds/sha.yml", "rounds/sha-best-first.yml"} {
		// A log directory each: the same trials' checkpoints are kept under its state.
		r := e.run("--output", "json", "--log-dir", "logs"+strconv.Itoa(i), "--results", "results.json", testdata(file))
		r.wantCode(t, 0)
		res := e.roundsResults(t, "results.json")
		got := res.statuses()
		if first == nil {
			first = got
		} else if !maps.Equal(first, got) {
			t.Errorf("written best first: %v\nworst first: %v", got, first)
		}
		counts := map[string]int{}
		for _, s := range got {
			counts[s]++
		}
		if !maps.Equal(counts, map[string]int{"ok": 1, "pruned1": 6, "pruned3": 2}) {
			t.Errorf("%s: %v, want 1 ok, 6 pruned at step 1 and 2 at step 3", file, got)
		}
		if n := strings.Count(r.stdout, `"status":"paused"`); n != 9+3 {
			t.Errorf("%s: %d pauses, want 12 (9 at step 1, 3 at step 3)", file, n)
		}
		for _, tr := range res.Tasks {
			if tr.Status != "ok" {
				continue
			}
			if len(tr.Resumes) != 2 {
				t.Errorf("%s: %s resumed %d times, want 2: %+v", file, tr.Name, len(tr.Resumes), tr.Resumes)
			}
			lr := strings.TrimPrefix(tr.Name, "lr=")
			want := sgdCurve(t, python, lr)
			if got := tr.MetricSeries["val_accuracy"]; !slices.Equal(got, want) {
				t.Errorf("%s: %s's curve %v, want %v as never paused", file, tr.Name, got, want)
			}
		}
	}
}

// TestHyperbandBrackets (issue 27, point 3): hyperband's brackets (five trials halved at
// step 2, four run to their end) are the same whatever the order.
func TestHyperbandBrackets(t *testing.T) {
	t.Parallel()
	e, _ := roundsE2E(t)
	r := e.run("--log-dir", "logs", "--results", "results.json", testdata("rounds/hyperband.yml"))
	r.wantCode(t, 0)
	counts := map[string]int{}
	for _, s := range e.roundsResults(t, "results.json").statuses() {
		counts[s]++
	}
	if !maps.Equal(counts, map[string]int{"ok": 5, "pruned2": 4}) {
		t.Errorf("statuses %v, want 5 ok (1 of the first bracket, the 4 of the second) and 4 pruned at step 2\n%v", counts, r)
	}
	if !strings.Contains(r.stdout, "hyperband: val_accuracy") {
		t.Errorf("no trial pruned by hyperband\n%v", r)
	}
}

// TestPBTLineage (issue 27, point 4): pbt pauses the population every 2 epochs; the worst
// trial continues from a copy of the best one's checkpoint with explored values, which its
// command gets; the results keep each trial's lineage.
func TestPBTLineage(t *testing.T) {
	t.Parallel()
	e, _ := roundsE2E(t)
	r := e.run("--log-dir", "logs", "--results", "results.json", testdata("rounds/pbt.yml"))
	r.wantCode(t, 0)
	res := e.roundsResults(t, "results.json")
	exploits := 0
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s, want ok", tr.Name, tr.Status)
		}
		for _, l := range tr.Lineage {
			exploits++
			if l.From == tr.Name || l.From == "" || (l.Step != 2 && l.Step != 4) || l.Params["lr"] == "" {
				t.Errorf("%s: lineage %+v", tr.Name, l)
			}
			said := "[" + tr.Name + "] resumed after epoch " + strconv.Itoa(l.Step) + " with lr "
			if !strings.Contains(r.stdout, said) {
				t.Errorf("%s did not resume at step %d (%q)\n%v", tr.Name, l.Step, said, r)
			}
			if !strings.Contains(r.stdout, "pbt: "+tr.Name+" (val_accuracy ") || !strings.Contains(r.stdout, "continues from "+l.From+"'s checkpoint") {
				t.Errorf("the output does not tell %s's exploit\n%v", tr.Name, r)
			}
		}
	}
	for _, tr := range res.Tasks {
		// Its record names the values it ended with, and those it started with beside them.
		if n := len(tr.Lineage); n > 0 && (tr.Params["lr"] != tr.Lineage[n-1].Params["lr"] || "lr="+tr.Initial["lr"] != tr.Name) {
			t.Errorf("%s: params %v, initial_params %v; want its last exploit's lr %s, and its own", tr.Name, tr.Params, tr.Initial, tr.Lineage[n-1].Params["lr"])
		}
	}
	if exploits != 2 {
		t.Errorf("%d exploits, want one at each of steps 2 and 4\n%v", exploits, r)
	}
}

// TestCheckPrintsSchedule (issue 27, point 5): check prints each block's schedule, its rungs
// and what they cost against every trial run to its end.
func TestCheckPrintsSchedule(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("check", testdata("rounds/sha.yml"))
	r.wantCode(t, 0)
	want := "early stop: sha on val_accuracy (higher is better), grace 1, reduction 3, max 6: the trials pause at their checkpoints at each rung, and the best 1/3 of each rung resume; rungs at step 1: 9 trials, step 3: 3, then 1 run to step 6; GPU-time, about: 18 of the 54 steps that every trial run to step 6 takes (33%), in 13 starts instead of 9"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("check does not print %q\n%v", want, r)
	}
}

// TestPauseCheckpointStale (issue 27, point 5): a trial whose checkpoint has not changed
// since step 1 when its pause needs step 2 is told so in its output and the summary after
// the checkpoint's wait, and stopped as pruned; the round goes on without it.
func TestPauseCheckpointStale(t *testing.T) {
	t.Parallel()
	e, _ := roundsE2E(t)
	r := e.run("--output", "plain", "--log-dir", "logs", "--results", "results.json", testdata("rounds/stale.yml"))
	r.wantCode(t, 0)
	got := e.roundsResults(t, "results.json").statuses()
	if !strings.HasPrefix(got["lr=0.1 stale"], "pruned") || got["lr=0.01"] != "ok" && got["lr=0.001"] != "ok" {
		t.Errorf("statuses %v, want the stale trial pruned and the round decided without it\n%v", got, r)
	}
	said := "has not changed since step 1, and pausing needs step 2"
	if strings.Count(r.stdout, said) < 2 {
		t.Errorf("the output and the summary do not both say %q\n%v", said, r)
	}
}

// sgdCurve is train.py's validation accuracy at each of 6 epochs, uninterrupted.
func sgdCurve(t *testing.T, python, lr string) []float64 {
	t.Helper()
	return valAccuracies(t, python, testdata("rounds/train.py"), "--name", "x", "--lr", lr, "--epochs", "6", "--ckpt", t.TempDir())
}

// TestSHAAcrossClaims (issue 27, point 3): two runalls share sha.yml's sweep through the
// claims prefix: each trial ends once, the rounds' values are under the prefix, and the
// sweep ends as one runall alone ends it.
func TestSHAAcrossClaims(t *testing.T) {
	t.Parallel()
	alone, _ := roundsE2E(t)
	alone.run("--log-dir", "logs", "--results", "results.json", testdata("rounds/sha.yml")).wantCode(t, 0)
	want := alone.roundsResults(t, "results.json").statuses()

	c := newClaimsE2E(t)
	python := pythonWith(t, "sklearn", "python3-sklearn")
	c.env = append(c.env, "PYTHON="+python, "SCRIPTS="+testdata("rounds"), "OMP_NUM_THREADS=1")
	first := c.start(0, "rounds/claims-sha.yml")
	second := c.start(1, "rounds/claims-sha.yml")
	first.wait().wantCode(t, 0)
	second.wait().wantCode(t, 0)
	if recs := c.records(); len(recs) != 9 {
		t.Errorf("done records %v, want one per trial", recs)
	}
	got := map[string]string{}
	for _, tr := range c.merged().Tasks {
		got[tr.Name] = tr.Status
	}
	for name, s := range want {
		if !strings.HasPrefix(s, got[name]) {
			t.Errorf("%s: %s across two runalls, %s alone", name, got[name], s)
		}
	}
	if keys := c.keys(c.prefix + "rounds/"); len(keys) < 9+3 {
		t.Errorf("the rounds' values under the prefix: %q, want 12 (9 at step 1, 3 at step 3) and the ended", keys)
	}
}

// TestPausedResumedWhereRoom (issue 27, point 3): under --claims a paused trial is resumed
// by whichever runall has room, not only by the one that paused it. The first runall claims
// two trials on its 8 GiB GPU (4 GiB each); then another user takes 7 GiB of that GPU for a
// minute, so that it can start nothing more; the second runall, on a GPU of its own, runs
// the third trial to the rung. The rung resumes the best trial, paused on the first runall:
// the second resumes it from its checkpoint under the prefix, at once, and the first ends
// without waiting for room. The trial's curve is the one a run never paused draws.
func TestPausedResumedWhereRoom(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	python := pythonWith(t, "sklearn", "python3-sklearn")
	c.env = append(c.env, "PYTHON="+python, "SCRIPTS="+testdata("rounds"), "OMP_NUM_THREADS=1")
	onGPU := func(n int, sleep string) *proc {
		ns := strconv.Itoa(n)
		e := c.withEnv("RUNALL_FAKE_GPU_STATE="+c.path("gpu"+ns), "SLEEP="+sleep)
		return e.start("--fake-gpus", "8GiB", "--log-dir", "logs"+ns, "--results", "results"+ns+".json",
			testdata("rounds/claims-room.yml"))
	}
	first := onGPU(0, "2")
	eventually.True(t, "the first runall to claim two trials", func() bool { return len(c.keys(c.prefix+"claims/")) == 2 })
	c.withEnv("RUNALL_FAKE_GPU_STATE="+c.path("gpu0")).claimOutside("8GiB", 0, "7GiB")
	second := onGPU(1, "0.2")
	r0, r1 := first.wait(), second.wait()
	r0.wantCode(t, 0)
	r1.wantCode(t, 0)

	best := "lr=0.1"
	if !strings.Contains(r0.stdout, best+": resumed: its claim is given back") ||
		!strings.Contains(r0.stdout, "["+best+"] skipped: paused here, then resumed and ended by another runall") {
		t.Errorf("the first runall does not say it gave %s back to the sweep\n%v", best, r0)
	}
	recs := c.records()
	if len(recs) != 3 || recs[best] != second.cmd.Process.Pid {
		t.Errorf("done records by pid %v; want 3, %s's by the second runall (pid %d), which had room\n%v\n%v",
			recs, best, second.cmd.Process.Pid, r0, r1)
	}
	var merged roundsResults
	body, _ := c.get(c.prefix + "results.json")
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		t.Fatal(err)
	}
	for _, tr := range merged.Tasks {
		if tr.Name != best {
			continue
		}
		want := sgdCurve(t, python, "0.1")[:3]
		if tr.Status != "ok" || len(tr.Resumes) == 0 || tr.Resumes[0].Step != 1 || !slices.Equal(tr.MetricSeries["val_accuracy"], want) {
			t.Errorf("%s: %s, resumed at %v, series %v; want ok, resumed at step 1, and an unpaused run's %v",
				best, tr.Status, tr.Resumes, tr.MetricSeries["val_accuracy"], want)
		}
	}
}

// TestPBTAcrossClaims (issue 27, point 4): two runalls share pbt.yml's population through the
// claims prefix: each trial ends once, each exploit's copy is made once, under the prefix,
// and the merged results keep the lineage.
func TestPBTAcrossClaims(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	python := pythonWith(t, "sklearn", "python3-sklearn")
	c.env = append(c.env, "PYTHON="+python, "SCRIPTS="+testdata("rounds"), "OMP_NUM_THREADS=1")
	first := c.start(0, "rounds/claims-pbt.yml")
	second := c.start(1, "rounds/claims-pbt.yml")
	r0, r1 := first.wait(), second.wait()
	r0.wantCode(t, 0)
	r1.wantCode(t, 0)
	if recs := c.records(); len(recs) != 4 {
		t.Errorf("done records %v, want one per trial", recs)
	}
	var merged roundsResults
	body, _ := c.get(c.prefix + "results.json")
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		t.Fatal(err)
	}
	exploits := 0
	for _, tr := range merged.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s, want ok", tr.Name, tr.Status)
		}
		exploits += len(tr.Lineage)
	}
	copied := 0
	for _, k := range c.keys(c.prefix + "rounds/") {
		if strings.Contains(k, "/copied/") {
			copied++
		}
	}
	if exploits != 2 || copied != 2 {
		t.Errorf("%d exploits in the merged results and %d copies under the prefix, want 2 and 2\n%v\n%v", exploits, copied, r0, r1)
	}
}
