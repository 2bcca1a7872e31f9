package main_test

import (
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
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
		"early stop: asha on val_accuracy (higher is better), grace 1, reduction 3, max 27; rungs step 1: at most 9, step 3: at most 3, step 9: at most 1",
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
	for _, want := range []string{"[c] got TERM", "[c] pruned (exit code 143)", "Summary: 3 ok, 1 pruned"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output does not say %q\n%v", want, r)
		}
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
