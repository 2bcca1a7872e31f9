package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/runall/runall/examples/k8s/test/cluster"
)

// What Kueue v0.17.0 writes on the Workloads of an elastic Job (pkg/workloadslicing).
const (
	sliceReplaces = "kueue.x-k8s.io/workload-slice-replacement-for" // on a scale-up's slice: NS/NAME of the one it replaces
	sliceReplaced = "WorkloadSliceReplaced"                         // the Finished reason of a replaced slice
)

// TestKueueElasticClaimsScaled (issue 46, point 4, under Kueue): the claims Job of
// examples/k8s/kueue/claims-elastic, with Kueue's alpha ElasticJobsViaWorkloadSlices on, is
// scaled 2 -> 4 -> 1 by patching its parallelism while it runs, as TestClaimsJobScaled does
// without Kueue. Kueue admits the scale-up as a new Workload slice in place of the first (the
// two added Pods wait, gated, until it does) and shrinks that slice in place on the
// scale-down; it never suspends the Job, so the two Pods it started keep their trials. Every
// trial runs once to its end, none twice from scratch; the removed Pods' trials resume from
// their copies on the one left.
func TestKueueElasticClaimsScaled(t *testing.T) {
	e := setup(t)
	// Four Pods of 100m each: the default quota (three) would leave the scale-up queued.
	e.c.StartKueueWith(t, cluster.KueueOptions{ElasticJobs: true, Quota: "400m"}, e.ns)
	const n, steps = 8, 8
	two := int32(2)
	suspended := e.suspensions(t, claimsJob)
	uid := e.apply(t, "kueue/claims-elastic", stepsFile(n, steps), func(ex *example) { ex.job.Spec.Parallelism = &two })
	waitFor(t, time.Minute, "Kueue to admit the sweep", func() bool { return e.admitted(t, claimsJob) })
	e.waitCheckpoints(t, uid)
	t0 := time.Now()
	e.scale(t, 4)
	waitFor(t, 2*time.Minute, "Kueue to admit a slice of 4 Pods", func() bool {
		w := e.workloads(t)
		return len(w) == 2 && w[1].count == 4 && w[1].admitted
	})
	admitted := time.Since(t0)
	waitFor(t, 2*time.Minute, "4 Pods running", func() bool { return len(e.running(t)) >= 4 })
	up := time.Since(t0)
	twice, resumed := e.scaledDownToEnd(t, uid, n, steps)
	if s := suspended(); s != 0 {
		t.Errorf("Kueue suspended the running Job %d times: it queued the resized Job again instead of admitting a slice", s)
	}
	e.checkSlices(t)
	e.checkResults(t, "catdog-claims/"+string(uid)+"/", n)
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(context.Background(), claimsJob, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured: %d trials of %d steps, parallelism 2 -> 4 -> 1 under Kueue (elastic): 0 restarted from scratch, %d attempts resumed, %d steps trained twice in all, 0 suspensions, 2 Workload slices, %d Pods counted failed; the scale-up's slice admitted %v after the patch, 4 Pods running after %v",
		n, steps, resumed, twice, j.Status.Failed, admitted.Round(100*time.Millisecond), up.Round(100*time.Millisecond))
}

// checkSlices fails t unless the Job has the two Workloads of one scale-up: the first (2
// Pods) finished as replaced, the second naming it as the slice it replaces, finished with
// the Job (Kueue deletes a Workload it re-queues and makes one anew, under the same name).
func (e *env) checkSlices(t *testing.T) {
	t.Helper()
	w := e.workloads(t)
	if len(w) != 2 {
		t.Fatalf("%d Workloads for the Job (%v), want 2: the first and the scale-up's slice", len(w), w)
	}
	if w[0].count != 2 || w[0].finished != sliceReplaced {
		t.Errorf("first Workload %+v, want 2 Pods, finished %s", w[0], sliceReplaced)
	}
	if want := e.ns + "/" + w[0].name; w[1].replaces != want {
		t.Errorf("second Workload %+v, want it to replace %s", w[1], want)
	}
	if w[1].count != 1 || w[1].finished != "Succeeded" {
		t.Errorf("second Workload %+v, want 1 Pod (shrunk in place by the scale-down), finished Succeeded", w[1])
	}
}

// scale patches the claims Job's parallelism.
func (e *env) scale(t *testing.T, p int) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"parallelism":%d}}`, p)
	if _, err := e.c.Client.BatchV1().Jobs(e.ns).Patch(context.Background(), claimsJob, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("parallelism %d: %v", p, err)
	}
}

// suspensions watches the Job from now on; the func it returns says how many times the Job
// went from running (spec.suspend false) back to suspended.
func (e *env) suspensions(t *testing.T, name string) func() int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.c.Client.BatchV1().Jobs(e.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var count int
	var closed bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		running := false
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok {
				continue
			}
			on := j.Spec.Suspend != nil && *j.Spec.Suspend
			mu.Lock()
			if running && on {
				count++
			}
			mu.Unlock()
			running = !on
		}
		mu.Lock()
		closed = ctx.Err() == nil
		mu.Unlock()
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return func() int {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if closed {
			t.Errorf("the watch of Job %s ended early: a suspension may have gone unseen", name)
		}
		return count
	}
}

// workload is what checkSlices reads of one of the Job's Workloads.
type workload struct {
	name, replaces string
	count          int64  // Pods of its one PodSet
	admitted       bool   // condition Admitted
	finished       string // condition Finished's reason, when true
	created        time.Time
}

// workloads lists the claims Job's Workloads, oldest first.
func (e *env) workloads(t *testing.T) []workload {
	t.Helper()
	dyn, err := dynamic.NewForConfig(e.c.Config)
	if err != nil {
		t.Fatal(err)
	}
	l, err := dyn.Resource(cluster.KueueWorkloads).Namespace(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []workload
	for _, u := range l.Items {
		if !slices.ContainsFunc(u.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.Kind == "Job" && o.Name == claimsJob }) {
			continue
		}
		w := workload{name: u.GetName(), replaces: u.GetAnnotations()[sliceReplaces], created: u.GetCreationTimestamp().Time}
		if sets, _, _ := unstructured.NestedSlice(u.Object, "spec", "podSets"); len(sets) == 1 {
			w.count, _, _ = unstructured.NestedInt64(sets[0].(map[string]any), "count")
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			switch {
			case m["status"] != "True":
			case m["type"] == "Admitted":
				w.admitted = true
			case m["type"] == "Finished":
				w.finished, _ = m["reason"].(string)
			}
		}
		out = append(out, w)
	}
	// A scale-up's slice may share its first's creation second: it names the one it replaces.
	slices.SortFunc(out, func(a, b workload) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		if strings.HasSuffix(b.replaces, "/"+a.name) {
			return -1
		}
		return 1
	})
	return out
}
