package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodExample: examples/k8s/pod runs its sweep and exits 0, every trial's outputs in MinIO
// under the Pod's uid (RUN_ID from metadata.uid).
func TestPodExample(t *testing.T) {
	e := setup(t)
	const n = 4
	uid := e.apply(t, "pod", trialsFile(n, "1"), nil)
	var pod *corev1.Pod
	waitFor(t, 3*time.Minute, "the Pod to end", func() bool {
		p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), "runall-catdog", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the Pod %s, want Succeeded (runall exit 0); its log:\n%s", pod.Status.Phase, e.logs(t))
	}
	e.checkEachOnce(t, uid, n)
	e.checkResults(t, "catdog/"+string(uid)+"/.runall-runs/", n)
}

// TestIndexedJobOfShards: examples/k8s/job's Indexed Job completes; each Pod runs the trials
// of its completion index (trial i on shard i mod completions), and every trial runs once.
func TestIndexedJobOfShards(t *testing.T) {
	e := setup(t)
	const n = 4
	uid := e.apply(t, "job", trialsFile(n, "1"), nil)
	if end := e.waitJobEnd(t, "runall-catdog-sweep", 3*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	e.checkEachOnce(t, uid, n)
	e.checkResults(t, "catdog/"+string(uid)+"/.runall-runs/", n) // each shard's: together every trial once
	ex := render(t, "job")
	shards := int(*ex.job.Spec.Completions)
	for _, k := range e.s3.keys(t, "catdog/"+string(uid)+"/") {
		m := markerKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		body := e.s3.get(t, k)
		var i int
		fmt.Sscan(m[1], &i)
		if want := fmt.Sprintf("shard=%d", i%shards); strings.TrimSpace(body) != want {
			t.Errorf("trial %d ran on %q, want %s (its index modulo %d shards)", i, strings.TrimSpace(body), want, shards)
		}
	}
}

// TestClaimsJob: examples/k8s/claims' Job of 3 Pods sharing one queue completes, every
// trial run once, by more than one Pod.
func TestClaimsJob(t *testing.T) {
	e := setup(t)
	const n = 6
	uid := e.apply(t, "claims", trialsFile(n, "3"), nil)
	if end := e.waitJobEnd(t, "runall-catdog-claims", 4*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	e.checkEachOnce(t, uid, n)
	e.checkResults(t, "catdog-claims/"+string(uid)+"/", n) // the merged results under the queue's prefix
	if got := len(e.pods(t)); got < 3 {
		t.Errorf("%d Pods, want parallelism 3", got)
	}
}
