package main_test

import (
	"strconv"
	"testing"

	"github.com/runall/runall/internal/trainertest"
)

// TestPodProgressClaims (issue 46, point 5): the Pods of a claims sweep publish the sweep's
// figures, merged from what the claims store holds, not each its own trials: both Pods'
// last annotations count every trial done and name the sweep's best trial (trial 2,
// loss 1), which only one of them ran; the Pod of index 0 alone posts the same to Kubeflow
// Trainer, in Trainer's shape.
func TestPodProgressClaims(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	api, trainer := newAPIStub(t, false), trainertest.New(t, "sweeps", "tj", "tr4iner")
	var procs []*proc
	for n := range 2 {
		ns := strconv.Itoa(n)
		e := api.envFor(t, c.e2e, "pod-"+ns)
		e = e.withEnv(append(trainer.Env(t, c.path("trainer"+ns)), "JOB_COMPLETION_INDEX="+ns)...)
		procs = append(procs, e.start("--log-dir", "logs"+ns, "--results", "results"+ns+".json", testdata("claims/objective.yml")))
	}
	for _, p := range procs {
		p.wait().wantCode(t, 0)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.bad) > 0 {
		t.Fatalf("wrong patches: %v", api.bad)
	}
	want := map[string]string{"runall.dev/done": "4", "runall.dev/running": "0", "runall.dev/waiting": "0",
		"runall.dev/best": "trial 2 loss=1", "runall.dev/scope": "sweep"}
	for _, pod := range []string{"pod-0", "pod-1"} {
		patches := api.byPod[pod]
		if len(patches) == 0 {
			t.Errorf("%s: not patched", pod)
			continue
		}
		last := patches[len(patches)-1]
		for k, v := range want {
			if last[k] != v {
				t.Errorf("%s: the last patch's %s = %q, want %q (%v)", pod, k, last[k], v, last)
			}
		}
		for _, p := range patches {
			n := 0
			for _, k := range []string{"runall.dev/done", "runall.dev/running", "runall.dev/waiting"} {
				v, _ := strconv.Atoi(p[k])
				n += v
			}
			if n != 4 {
				t.Errorf("%s: a patch counts %d trials done, running and waiting, want the sweep's 4: %v", pod, n, p)
			}
		}
	}
	if bad := trainer.Refused(); len(bad) > 0 {
		t.Fatalf("Trainer refused: %q", bad)
	}
	posts := trainer.Posts()
	if len(posts) == 0 {
		t.Fatal("nothing posted to Trainer")
	}
	last := posts[len(posts)-1]
	for k, v := range map[string]string{"trialsDone": "4", "bestTrial": "trial 2", "loss": "1", "scope": "sweep"} {
		if got, _ := last.Get(k); got != v {
			t.Errorf("Trainer's last post: %s = %q, want %q (%v)", k, got, v, last.Metrics)
		}
	}
	if last.ProgressPercentage == nil || *last.ProgressPercentage != 100 {
		t.Errorf("Trainer's last post: progressPercentage %v, want 100", last.ProgressPercentage)
	}
}
