package main_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/citest"
)

// Sweeps that adapt, as a user sees them: metrics read from the output as scripts print
// them, unnamed trials named by their flags, sampled search spaces, early stopping and a
// sampler of the user's own.

// TestCheckSimulateAdaptive: check --simulate lists the sampled trials and asha's budget per
// rung; two checks of the same file print the same trials.
func TestCheckSimulateAdaptive(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	args := []string{"check", "--simulate", "--fake-gpus", "2x16GiB", "--duration", "1m", testdata("adapt/sample-asha.yml")}
	r := e.run(args...)
	r.wantCode(t, 0)
	for _, want := range []string{
		"early stop: asha on val_accuracy (higher is better), grace 1, reduction 3, max 27; trials reaching each rung, about: step 1: 9, step 3: 3.5, step 9: 2.0; about 54 steps in all, of the 243 that every trial run to step 27 takes (22%)",
		"digits [lr=",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check --simulate does not say %q\n%v", want, r)
		}
	}
	if n := strings.Count(r.stdout, "\n  digits [lr="); n != 9 {
		t.Errorf("%d sampled trials listed, want 9\n%v", n, r)
	}
	if again := e.run(args...); again.stdout != r.stdout {
		t.Errorf("two checks of one file differ:\n%s\n---\n%s", r.stdout, again.stdout)
	}
}

// TestTutorialStyle: two unnamed trials that differ in their flags, whose script prints
// Keras epoch lines, with no runall key added: named and given params by their flags, with
// per-epoch metrics read from the output.
func TestTutorialStyle(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	copyTestdata(t, "adapt/keras_like.sh", e.path("keras_like.sh"))
	r := e.runFile("adapt/tutorial.yml")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	want := map[string]struct {
		params map[string]string
		acc    []float64
	}{
		"expid=1 dropout=0.50 learning_rate=0.01": {map[string]string{"expid": "1", "dropout": "0.50", "learning_rate": "0.01"}, []float64{0.51, 0.52, 0.53}},
		"expid=2 dropout=0.25 learning_rate=0.1":  {map[string]string{"expid": "2", "dropout": "0.25", "learning_rate": "0.1"}, []float64{0.6, 0.7, 0.8}},
	}
	if len(res.Tasks) != 2 {
		t.Fatalf("%d tasks, want 2\n%v", len(res.Tasks), r)
	}
	for _, tr := range res.Tasks {
		w, ok := want[tr.Name]
		if !ok {
			t.Errorf("trial named %q, want one of the flag names\n%v", tr.Name, r)
			continue
		}
		if !maps.Equal(tr.Params, w.params) || !slices.Equal(tr.MetricSeries["val_accuracy"], w.acc) ||
			!slices.Equal(tr.MetricSeries["loss"], []float64{0.6259, 0.5259, 0.4259}) || tr.Metrics["val_loss"] != 0.6948 {
			t.Errorf("%s: params %v, metrics %v, series %v", tr.Name, tr.Params, tr.Metrics, tr.MetricSeries)
		}
		if !strings.Contains(r.stdout, "  "+tr.Name+"\n") {
			t.Errorf("the summary does not name %q\n%v", tr.Name, r)
		}
	}
}

// TestASHAPrunes: c falls below asha's first rung and is pruned: SIGTERM to it, status
// pruned (not failed: exit 0, stop-on-failure untouched, the trial after it runs), its
// metrics so far kept, its GPU room to d, which waited for it.
func TestASHAPrunes(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("adapt/asha.yml", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	status := map[string]string{}
	for _, tr := range res.Tasks {
		status[tr.Name] = tr.Status
		if tr.Name == "c" {
			if tr.Metrics["acc"] != 0.1 || !strings.Contains(tr.Reason, "asha: acc 0.1 at step 1 is not in the top 1/3") {
				t.Errorf("c: metrics %v, reason %q", tr.Metrics, tr.Reason)
			}
		}
	}
	if !maps.Equal(status, map[string]string{"a": "ok", "b": "ok", "c": "pruned", "d": "ok"}) {
		t.Errorf("statuses %v\n%v", status, r)
	}
	if strings.Contains(r.stdout, "acc=0.2") {
		t.Errorf("c ran past its first epoch\n%v", r)
	}
	for _, want := range []string{"[c] got TERM", "[c] pruned in ", "Summary: 3 ok, 1 pruned"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output does not say %q\n%v", want, r)
		}
	}
	// The pruned trial's row says why, not the exit code and signal its stop made.
	if !regexp.MustCompile(`(?m)^pruned +- +.* c \(stopped: asha: `).MatchString(r.stdout) || strings.Contains(r.stdout, "killed by SIGTERM") {
		t.Errorf("the summary shows the pruned trial with noise\n%v", r)
	}
	// d could only start once c's room was free: it waited for c.
	if strings.Index(r.stdout, "[d] started") < strings.Index(r.stdout, "[c] pruned") {
		t.Errorf("d started before c was pruned\n%v", r)
	}
}

// TestSIGTERMDuringPrune: runall told to stop while a pruned trial is still ending ends
// cleanly, as for any signal: 143, the pruned trial not failed, no trial started after.
func TestSIGTERMDuringPrune(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = append(e.env, "TERM_DELAY=3")
	p := e.start("--log-dir", "logs", "--results", "results.json", "--fake-gpus", "16GiB", "--grace", "10s", testdata("adapt/asha.yml"))
	p.waitOutput("[c] got TERM")
	p.signal(syscall.SIGTERM)
	r := p.wait()
	r.wantCode(t, 143)
	res := readOutcome(t, []byte(e.read("results.json")))
	for _, tr := range res.Tasks {
		switch tr.Name {
		case "c":
			if tr.Status != "pruned" && tr.Status != "stopped" {
				t.Errorf("c: status %s, want pruned (or stopped)", tr.Status)
			}
		case "d":
			if tr.Status != "skipped" {
				t.Errorf("d: status %s, want skipped: no trial starts after SIGTERM", tr.Status)
			}
		}
	}
	if res.Status != "stopped" {
		t.Errorf("run status %q, want stopped", res.Status)
	}
}

// copyTestdata copies a file of testdata/ into a test's working directory.
func copyTestdata(t *testing.T, name, to string) {
	t.Helper()
	b, err := os.ReadFile(testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// studyScript prints an Optuna study's trials as JSON lines.
const studyScript = `
import json, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
s = optuna.load_study(study_name="s", storage="sqlite:///study.db")
for t in s.trials:
    print(json.dumps({"number": t.number, "state": t.state.name, "params": t.params, "values": t.values}))
`

type studyTrial struct {
	Number int                `json:"number"`
	State  string             `json:"state"`
	Params map[string]float64 `json:"params"`
	Values []float64          `json:"values"`
}

// TestOptunaAskTell: Optuna's own CLI as the sampler, with SQLite storage. 12 trials are
// asked, run 3 at a time on a simulated GPU and told: the study then holds 12 complete
// trials whose values are the ones runall read. How many results each ask saw is not
// asserted: tells run beside the sweep (issue 28 point 7: asks are not held behind tells), so
// it depends on how long Optuna's tells take on the machine; the first ask runs alone, as it
// creates the study's SQLite schema (concurrent first asks raced on it and failed).
func TestOptunaAskTell(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("optuna"); err != nil {
		citest.Unavailable(t, "optuna not found: install python3-optuna")
	}
	e := newE2E(t)
	r := e.runFile("adapt/optuna.yml", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	if len(res.Tasks) != 12 {
		t.Fatalf("%d trials in the results, want 12\n%v", len(res.Tasks), r)
	}
	read := map[string]float64{} // x as runall put it in the command → the score it read
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s", tr.Name, tr.Status)
		}
		read[tr.Params["x"]] = tr.Metrics["score"]
	}
	py := exec.Command("/usr/bin/python3", "-c", studyScript)
	py.Dir = e.dir
	out, err := py.Output()
	if err != nil {
		t.Fatalf("reading the study: %v", err)
	}
	var trials []studyTrial
	for _, l := range lines(string(out)) {
		var st studyTrial
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		trials = append(trials, st)
	}
	if len(trials) != 12 {
		t.Fatalf("the study holds %d trials, want 12:\n%s", len(trials), out)
	}
	for _, st := range trials {
		x := strconv.FormatFloat(st.Params["x"], 'g', -1, 64)
		v, ok := read[x]
		if st.State != "COMPLETE" || len(st.Values) != 1 || !ok || st.Values[0] != v {
			t.Errorf("trial %d: %s x=%s values %v; runall read %v (%v)", st.Number, st.State, x, st.Values, v, ok)
		}
	}
}

// TestSearchAskFails: a sampler that fails after two trials: they run and are told, the
// error names the command and says what it printed, the run fails (exit 1) and stops; the
// summary and the results show the search's task failed with that error, not only the run.
func TestSearchAskFails(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("adapt/badask.yml")
	r.wantCode(t, 1)
	for _, want := range []string{"search: ask `n=$(flock asked.lock", "exit status 3: it printed:", "stderr: no such study", "stdout: loading study s", "no more trials are asked for"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("output does not say %q\n%v", want, r)
		}
	}
	told := linesSorted(e.read("told"))
	if !slices.Equal(told, []string{"0 0.5 complete", "1 1.5 complete"}) {
		t.Errorf("told %q", told)
	}
	res := readOutcome(t, []byte(e.read("results.json")))
	status := map[string]string{}
	for _, tr := range res.Tasks {
		status[tr.Name] = tr.Status
		if tr.Name == "x=<x>" && !strings.Contains(tr.Reason, "no more trials are asked for") {
			t.Errorf("the search's task failed with %q, want the sampler's error", tr.Reason)
		}
		if tr.Name == "x=<x>" && tr.LogFile != "" {
			t.Errorf("the search's task names the log file %s, which it never wrote", tr.LogFile)
		}
		if _, err := os.Stat(filepath.Join(e.dir, tr.LogFile)); tr.Name != "x=<x>" && tr.Status == "ok" && err != nil {
			t.Errorf("%s: log file %q, want its log", tr.Name, tr.LogFile)
		}
	}
	if !maps.Equal(status, map[string]string{"x=0.5": "ok", "x=1.5": "ok", "x=<x>": "failed", "after": "skipped"}) {
		t.Errorf("statuses %v", status)
	}
	if !regexp.MustCompile(`(?m)^failed .*x=<x> \(search: ask`).MatchString(r.stdout) {
		t.Errorf("the summary does not show the search's task failed with its reason\n%v", r)
	}
}

// TestSampleCheckThenRun: the trials check lists are the trials the run runs, each with the
// sampled values as its params (the command got the same numbers).
func TestSampleCheckThenRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	chk := e.run("check", testdata("adapt/sample.yml"))
	chk.wantCode(t, 0)
	r := e.runFile("adapt/sample.yml")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	if len(res.Tasks) != 6 {
		t.Fatalf("%d trials, want 6\n%v", len(res.Tasks), r)
	}
	for _, tr := range res.Tasks {
		if !strings.Contains(chk.stdout, tr.Name+"\n") {
			t.Errorf("%q ran, but check did not list it\n%s", tr.Name, chk.stdout)
		}
		lr, err := strconv.ParseFloat(tr.Params["lr"], 64)
		if err != nil || lr < 1e-4 || lr > 1e-1 || tr.Metrics["lr"] != lr || strconv.Itoa(int(tr.Metrics["layers"])) != tr.Params["layers"] {
			t.Errorf("%s: params %v, metrics %v", tr.Name, tr.Params, tr.Metrics)
		}
		if a := tr.Params["act"]; a != "relu" && a != "tanh" && a != "gelu" {
			t.Errorf("%s: act %q", tr.Name, a)
		}
	}
}

// TestASHAAndSHABlocks: a plan with a block of each kind of early stopping. The values of
// the block whose rule pauses (sha) reached the pruner too, which made a rule-less worker
// of them and said that no trial is stopped early; each rule now takes its own block's.
func TestASHAAndSHABlocks(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("adapt/asha-and-sha.yml")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	status := map[string]string{}
	for _, tr := range res.Tasks {
		status[tr.Name] = tr.Status
	}
	want := map[string]string{"a": "ok", "b": "ok", "c": "pruned", "v=0.1": "pruned", "v=0.9": "ok", "v=0.5": "pruned"}
	if !maps.Equal(status, want) {
		t.Errorf("statuses %v, want %v\n%v", status, want, r)
	}
	if strings.Contains(r.stdout+r.stderr, "no trial is stopped early") {
		t.Errorf("a rule said it stops no trial\n%v", r)
	}
}
