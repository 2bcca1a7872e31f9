package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// TestExampleTrainResumes (issue 27, point 6): the worked example's Pod is preempted
// (SIGKILL to runall and its trials, its disk gone) once its trials have kept a checkpoint;
// the rerun restores each unfinished trial's checkpoint from S3, train.py goes on with
// --resume, and the trial ends as a run that nothing interrupted does.
func TestExampleTrainResumes(t *testing.T) {
	t.Parallel()
	x := newExample(t)
	logs := filepath.Join(x.tmp, "logs")
	p := x.start("--fake-gpus", "32GiB", "--log-dir", logs, "tasks.yml")
	under := "catdog/" + exampleRunID + "/"
	kept := func() map[string]int { // by trial folder: lr0.01-dropout0.1
		out := map[string]int{}
		s := &s3E2E{e2e: x.e2e, srv: x.srv, bucket: x.bucket}
		for folder, step := range s.keptSteps(under) {
			trial, _, _ := strings.Cut(folder, "/.runall-checkpoints/")
			out[trial] = step
		}
		return out
	}
	eventually.Within(t, 2*time.Minute, "two trials to keep a checkpoint in S3", func() bool { return len(kept()) >= 2 })
	var atDeath map[string]int
	podKill(t, p, func() { atDeath = kept() })
	for _, d := range []string{"outputs", "checkpoints", "data", "logs"} { // the Pod's disk is gone
		if err := os.RemoveAll(filepath.Join(x.tmp, d)); err != nil {
			t.Fatal(err)
		}
	}

	results := filepath.Join(x.tmp, "results.json")
	r := x.runWithin(5*time.Minute, "--fake-gpus", "32GiB", "--log-dir", logs, "--results", results, "tasks.yml")
	r.wantCode(t, 0)
	res := readResumeResults(t, mustRead(t, results))
	resumed := 0
	for _, tr := range res.Tasks {
		if !strings.HasPrefix(tr.Name, "train ") || tr.Status == "skipped" { // skipped: done before the Pod died
			continue
		}
		trial := strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(tr.Name, "train "), "=", ""), " ", "-")
		step, had := atDeath[trial]
		if tr.Status != "ok" || len(tr.MetricSeries["val_accuracy"]) != 5 {
			t.Errorf("%s: %s (%s), val_accuracy %v: want ok with 5 epochs", tr.Name, tr.Status, tr.Reason, tr.MetricSeries["val_accuracy"])
		}
		if !had {
			continue // it had kept nothing: it started over
		}
		if len(tr.Resumes) == 0 || tr.Resumes[0].Step != step {
			t.Errorf("%s: resumes %v, want one from epoch %d, kept when the Pod died", tr.Name, tr.Resumes, step)
			continue
		}
		resumed++
		if resumed == 1 { // one trial against a run that nothing interrupted
			lr, dropout, _ := strings.Cut(strings.TrimPrefix(trial, "lr"), "-dropout")
			want := x.uninterrupted(t, lr, dropout)
			if got := tr.MetricSeries["val_accuracy"]; !equalFloats(got, want) {
				t.Errorf("%s: val_accuracy %v after resuming at epoch %d, want %v as uninterrupted", tr.Name, got, step, want)
			}
			// A Pod that dies after the last epoch's checkpoint and before the trial's end
			// resumes it with nothing left to train: it still reports its epochs.
			if got := x.trainFrom(t, lr, dropout, filepath.Join(x.tmp, "checkpoints", trial)); !equalFloats(got, want) {
				t.Errorf("%s resumed after its last epoch: val_accuracy %v, want %v", tr.Name, got, want)
			}
		}
	}
	if resumed == 0 {
		t.Errorf("no trial resumed (kept at the Pod's death: %v)\n%v", atDeath, r)
	}
	if !strings.Contains(r.stdout, "resumed after epoch") {
		t.Errorf("train.py did not say it resumed\n%v", r)
	}
}

// uninterrupted is the val_accuracy per epoch of train.py run with nothing in its way, on
// the example's data.
func (x *example) uninterrupted(t *testing.T, lr, dropout string) []float64 {
	t.Helper()
	return x.trainFrom(t, lr, dropout, "")
}

// trainFrom is the val_accuracy per epoch that train.py reports in its metrics.json, run on
// the example's data from the checkpoint in ckpt (--resume), or from scratch when ckpt is "".
func (x *example) trainFrom(t *testing.T, lr, dropout, ckpt string) []float64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"train.py", "--lr", lr, "--dropout", dropout, "--epochs", "5", "--batch-size", "64",
		"--data-dir", filepath.Join(x.tmp, "data", "catsdogs-tiny"), "--output-dir", out}
	if ckpt != "" {
		args = append(args, "--checkpoint-dir", ckpt, "--resume")
	}
	cmd := exec.Command(x.python, args...)
	cmd.Dir, cmd.Env = x.dir, x.env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("train.py: %v\n%s", err, b)
	}
	var m struct {
		ValAccuracy []float64 `json:"val_accuracy"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "metrics.json")), &m); err != nil {
		t.Fatal(err)
	}
	return m.ValAccuracy
}

func equalFloats(a, b []float64) bool { return slices.Equal(a, b) }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
