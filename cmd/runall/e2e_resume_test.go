package main_test

// End-to-end tests of checkpoint: (issue 27): a trial's checkpoint kept where the sweep
// reaches it and restored before it starts again, after a Pod's death (SIGKILL to runall
// and its trials, the local disk gone) or on another runall under --claims, with a real
// training script that checkpoints (testdata/resume/sgd.py: scikit-learn's partial_fit, its
// model pickled each epoch).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// resumeResults is what these tests read of a results file.
type resumeResults struct {
	Status string `json:"status"`
	Tasks  []struct {
		Name         string               `json:"name"`
		Status       string               `json:"status"`
		Reason       string               `json:"reason"`
		Attempts     int                  `json:"attempts"`
		Metrics      map[string]float64   `json:"metrics"`
		MetricSeries map[string][]float64 `json:"metric_series"`
		Resumes      []struct {
			Step  int    `json:"step"`
			RunID string `json:"run_id"`
		} `json:"resumes"`
	} `json:"tasks"`
}

func readResumeResults(t *testing.T, body []byte) resumeResults {
	t.Helper()
	var r resumeResults
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("results: %v\n%s", err, body)
	}
	return r
}

// sgdEnv is what testdata/resume's task files need: the python with scikit-learn, the
// script's directory, the file each epoch is logged to, and the epochs' count and length.
func sgdEnv(t *testing.T, e *e2e, epochs int, sleep string) (python string) {
	python = pythonWith(t, "sklearn", "python3-sklearn")
	e.env = append(e.env, "PYTHON="+python, "SCRIPTS="+testdata("resume"), "WORK="+e.path("work.txt"),
		"EPOCHS="+strconv.Itoa(epochs), "SLEEP="+sleep, "OMP_NUM_THREADS=1")
	return python
}

// uninterrupted is the validation accuracy of each epoch of a run of sgd.py at lr that
// nothing interrupted.
func uninterrupted(t *testing.T, python, lr string, epochs int) []float64 {
	t.Helper()
	return valAccuracies(t, python, testdata("resume/sgd.py"), "--name", "x", "--lr", lr, "--epochs", strconv.Itoa(epochs),
		"--ckpt", filepath.Join(t.TempDir(), "ckpt"))
}

// valAccuracies runs a training script with python alone and returns the validation
// accuracy of each of its epochs, as its runall-metric lines say.
func valAccuracies(t *testing.T, python, script string, args ...string) []float64 {
	t.Helper()
	out, err := exec.Command(python, append([]string{script}, args...)...).Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(script), err, out)
	}
	var accs []float64
	for _, l := range lines(string(out)) {
		if v, ok := strings.CutPrefix(l, "runall-metric val_accuracy="); ok {
			f, _ := strconv.ParseFloat(v, 64)
			accs = append(accs, f)
		}
	}
	return accs
}

// epochsRun maps each trial of work.txt to the epochs it ran, in order, repeats included.
func (e *e2e) epochsRun() map[string][]int {
	out := map[string][]int{}
	if !e.exists("work.txt") {
		return out
	}
	for _, l := range lines(e.read("work.txt")) {
		f := strings.Fields(l)
		if n, err := strconv.Atoi(f[1]); err == nil { // not "NAME end ACCURACY"
			out[f[0]] = append(out[f[0]], n)
		}
	}
	return out
}

// podKill kills runall and every process it started with SIGKILL, as a preempted Pod dies.
// It freezes them all first (nothing runs on, nothing new starts) and calls atDeath, which
// reads what the Pod left (its kept checkpoints, the epochs it ran).
func podKill(t *testing.T, p *proc, atDeath func()) {
	t.Helper()
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	// A process that was forking as the tree was listed adds its child after: list again
	// until no process is new, so that none is left running (one was: a trial's
	// fake-alloc holding for 24 h under init).
	stopped := map[int]bool{}
	for fresh := true; fresh; {
		fresh = false
		for _, d := range descendants(pid) {
			if !stopped[d] {
				stopped[d], fresh = true, true
				_ = syscall.Kill(d, syscall.SIGSTOP)
			}
		}
	}
	atDeath()
	for d := range stopped {
		_ = syscall.Kill(d, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// descendants lists the processes under pid, read from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			parent[n], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for n := range parent {
		for p := parent[n]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// keptSteps reads the steps of the kept checkpoints' manifests under prefix, by trial folder.
func (s *s3E2E) keptSteps(prefix string) map[string]int {
	out := map[string]int{}
	for _, k := range s.keys(prefix) {
		if !strings.HasSuffix(k, "/manifest.json") {
			continue
		}
		body, ok := s.get(k)
		var m struct{ Step int }
		if ok && json.Unmarshal([]byte(body), &m) == nil {
			out[strings.TrimSuffix(strings.TrimPrefix(k, prefix), "/manifest.json")] = m.Step
		}
	}
	return out
}

// checkResumed checks that each trial of res ended ok with the series of a run that nothing
// interrupted, and that each trial the Pod left unfinished went on from the step its kept
// checkpoint held at the Pod's death (kept, by trial name), running again at most maxAgain
// of the epochs it had run (those whose copy had not landed yet).
func checkResumed(t *testing.T, res resumeResults, runs map[string][]int, want map[string][]float64, kept map[string]int, maxAgain int) {
	t.Helper()
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s (%s)", tr.Name, tr.Status, tr.Reason)
		}
		if got := tr.MetricSeries["val_accuracy"]; !slices.Equal(got, want[tr.Name]) {
			t.Errorf("%s: val_accuracy %v, want %v as uninterrupted", tr.Name, got, want[tr.Name])
		}
		step, ok := kept[tr.Name]
		if !ok {
			continue
		}
		if len(tr.Resumes) == 0 || tr.Resumes[0].Step != step {
			t.Errorf("%s: resumes %v, want one from step %d, what was kept when the Pod died", tr.Name, tr.Resumes, step)
			continue
		}
		ran := runs[tr.Name]
		i := slices.Index(ran, step+1)
		again := 0
		for _, e := range ran[:max(i, 0)] {
			if e > step {
				again++
			}
		}
		if i < 0 || again > maxAgain {
			t.Errorf("%s: %d epochs run again after resuming at %d (ran %v); want at most %d", tr.Name, again, step, ran, maxAgain)
		}
		t.Logf("%s: resumed at epoch %d; %d epoch(s) run again; epochs ran %v", tr.Name, step, again, ran)
	}
}

// keptAt reads the kept steps under prefix by trial name (the folder is the trial's name,
// slugged, and its key).
func (s *s3E2E) keptAt(prefix string) map[string]int {
	out := map[string]int{}
	for folder, step := range s.keptSteps(prefix) {
		for _, lr := range []string{"0.01", "0.05"} {
			if strings.HasPrefix(folder, "lr-"+lr+"-") { // trial lr=0.01's folder: lr-0.01-KEY
				out["lr="+lr] = step
			}
		}
	}
	return out
}

// TestPreemptionResumes (issue 27, point 2): a Pod killed with SIGKILL (runall and its
// trials) and its disk lost, then started again: each trial goes on from its kept
// checkpoint in S3 and ends with the metrics of a run that nothing interrupted. On
// fce6ef9 the rerun started from scratch and its uploads overwrote the newer checkpoints.
func TestPreemptionResumes(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	python := sgdEnv(t, s.e2e, 12, "1")
	s.env = append(s.env, "SAY=1") // the script says when its checkpoint is whole: copied at once
	want := map[string][]float64{}
	for _, lr := range []string{"0.01", "0.05"} {
		want["lr="+lr] = uninterrupted(t, python, lr, 12)
	}
	p := s.start("--log-dir", "logs", testdata("resume/preempt.yml"))
	const where = "run/.runall-checkpoints/"
	eventually.Within(t, 2*time.Minute, "both trials' checkpoints of epoch 2 to be kept in S3", func() bool {
		steps := s.keptSteps(where)
		return len(steps) == 2 && slices.Min(slices.Collect(mapsValues(steps))) >= 2
	})
	var kept map[string]int
	podKill(t, p, func() { kept = s.keptAt(where) })
	for _, d := range []string{"ckpt", "out", "logs"} { // the Pod's disk is gone
		if err := os.RemoveAll(s.path(d)); err != nil {
			t.Fatal(err)
		}
	}
	r := s.run("--log-dir", "logs", "--results", "results.json", testdata("resume/preempt.yml"))
	r.wantCode(t, 0)
	for _, l := range []string{"resumed from step", "RUNALL_RESUME_STEP="} {
		if !strings.Contains(r.stdout, l) {
			t.Errorf("the rerun's output says nothing of %q\n%v", l, r)
		}
	}
	res := readResumeResults(t, []byte(s.read("results.json")))
	checkResumed(t, res, s.epochsRun(), want, kept, 1)
}

// TestClaimsTakeoverResumes (issue 27, point 2): under --claims, the trial of a runall that
// was killed is taken over by another, which restores its checkpoint from the claims
// prefix: each trial finishes once, from its last checkpoint.
func TestClaimsTakeoverResumes(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	python := sgdEnv(t, c.e2e, 12, "1")
	c.env = append(c.env, "SAY=1")
	want := map[string][]float64{}
	for _, lr := range []string{"0.01", "0.05"} {
		want["lr="+lr] = uninterrupted(t, python, lr, 12)
	}
	where := c.prefix + "checkpoints/"
	first := c.start(0, "resume/claims.yml", "--lease", "2s")
	second := c.start(1, "resume/claims.yml", "--lease", "2s")
	eventually.Within(t, 2*time.Minute, "each runall's trial to keep epoch 2", func() bool {
		steps := c.keptSteps(where)
		return len(steps) == 2 && slices.Min(slices.Collect(mapsValues(steps))) >= 2
	})
	kept := map[string]int{}
	podKill(t, first, func() {
		all := c.keptAt(where)
		for _, d := range descendants(first.cmd.Process.Pid) { // the trial the killed runall ran
			b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(d), "cmdline"))
			for name, step := range all {
				if strings.Contains(string(b), "--name\x00"+name+"\x00") {
					kept[name] = step
				}
			}
		}
	})
	if len(kept) != 1 {
		t.Fatalf("the killed runall ran %v, want one trial", kept)
	}
	second.wait().wantCode(t, 0)
	if recs := c.records(); len(recs) != 2 {
		t.Errorf("done records %v, want one per trial", recs)
	}
	body, _ := c.get(c.prefix + "results.json")
	checkResumed(t, readResumeResults(t, []byte(body)), c.epochsRun(), want, kept, 1)
}

// TestResumeAfterRetry (issue 27, point 1): on the local disk (no S3 in the file), an
// attempt that failed is retried from the kept checkpoint, told RUNALL_RESUMED=1 and
// RUNALL_RESUME_STEP, and its metric series goes on at that step.
func TestResumeAfterRetry(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	python := sgdEnv(t, e, 10, "1")
	want := map[string][]float64{}
	for _, lr := range []string{"0.01", "0.05"} {
		want["lr="+lr] = uninterrupted(t, python, lr, 10)
	}
	p := e.start("--log-dir", "logs", "--results", "results.json", testdata("resume/local.yml"))
	eventually.Within(t, 2*time.Minute, "both trials to run two epochs", func() bool {
		runs := e.epochsRun()
		return len(runs) == 2 && len(runs["lr=0.01"]) >= 2 && len(runs["lr=0.05"]) >= 2
	})
	// The trials crash: runall retries each from its kept checkpoint. Frozen first, so that
	// the epochs each had saved are known when it dies.
	pid := p.cmd.Process.Pid
	var trials []int
	for _, d := range descendants(pid) {
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(d), "cmdline")); strings.Contains(string(b), "sgd.py") {
			trials = append(trials, d)
			_ = syscall.Kill(d, syscall.SIGSTOP)
		}
	}
	saved := map[string]int{} // the last epoch each logged: saved before it was logged
	for name, ran := range e.epochsRun() {
		saved[name] = slices.Max(ran)
	}
	for _, d := range trials {
		_ = syscall.Kill(d, syscall.SIGKILL)
	}
	if len(trials) < 2 {
		t.Fatalf("%d trial processes running to crash (epochs run %v), want both trials'", len(trials), e.epochsRun())
	}
	p.wait().wantCode(t, 0)
	res := readResumeResults(t, []byte(e.read("results.json")))
	// The disk is the same: the attempt's last copy is taken when it ends, so the retry
	// goes on from the last epoch it saved (logged, or saved and not logged yet when it died)
	// and runs none again.
	resumed := map[string]int{}
	for _, tr := range res.Tasks {
		if len(tr.Resumes) > 0 {
			resumed[tr.Name] = tr.Resumes[0].Step
		}
		if s := resumed[tr.Name]; s != saved[tr.Name] && s != saved[tr.Name]+1 {
			t.Errorf("%s: resumed at step %d; it had saved epoch %d when it died", tr.Name, s, saved[tr.Name])
		}
	}
	checkResumed(t, res, e.epochsRun(), want, resumed, 0)
	for _, tr := range res.Tasks {
		if tr.Attempts != 2 {
			t.Errorf("%s: %d attempts, want 2", tr.Name, tr.Attempts)
		}
	}
}

func mapsValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}
