package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runall/runall/examples/k8s/test/cluster"
)

// stepsFile is the task file of the preemption and scaling tests: n trials of steps seconds,
// one at a time per Pod (20 GiB of a 32 GiB simulated GPU), each keeping its step and a
// running sum of squares (its "result") in its checkpoint every second. Each attempt leaves
// start-UUID (the step it starts from: 0 is from scratch), stop-UUID on SIGTERM (the step it
// had reached) and done-UUID (the sum) when it ends.
func stepsFile(n, steps int) string {
	var idx []string
	for i := range n {
		idx = append(idx, fmt.Sprint(i))
	}
	return fmt.Sprintf(`s3:
  upload:
    - from: ${OUTPUT_DIR}/
      to: s3://${S3_BUCKET}/catdog/${RUN_ID}/
tasks:
  - name: trials
    parallel-tasks:
      - name: trial <i>
        matrix:
          i: [%s]
        cmd: |
          ck=/tmp/checkpoints/t<i>; out="$OUTPUT_DIR/t<i>"; mkdir -p "$ck" "$out"
          s=0; acc=0; [ -f "$ck/state" ] && read s acc < "$ck/state"
          echo "$s" > "$out/start-$(cat /proc/sys/kernel/random/uuid)"
          trap 'echo "$s" > "$out/stop-$(cat /proc/sys/kernel/random/uuid)"; exit 143' TERM
          while [ "$s" -lt %d ]; do sleep 1; s=$((s+1)); acc=$((acc+s*s)); echo "$s $acc" > "$ck/state"; echo "runall-checkpoint step=$s"; done
          echo "$acc" > "$out/done-$(cat /proc/sys/kernel/random/uuid)"
        checkpoint: /tmp/checkpoints/t<i>
        gpu-memory: 20GiB
        upload:
          - from: ${OUTPUT_DIR}/t<i>/
            to: s3://${S3_BUCKET}/catdog/${RUN_ID}/t<i>/
`, strings.Join(idx, ", "), steps)
}

var attemptKey = regexp.MustCompile(`^catdog/[^/]+/t(\d+)/(start|stop|done)-[0-9a-f-]+$`)

// attempts is what the trials of stepsFile left in MinIO: per trial, the steps its attempts
// started from and stopped at, and the results it ended with.
type attempts struct {
	starts, stops map[string][]int
	results       map[string][]int
}

func (e *env) attempts(t *testing.T, runID types.UID) attempts {
	t.Helper()
	a := attempts{map[string][]int{}, map[string][]int{}, map[string][]int{}}
	for _, k := range e.s3.keys(t, "catdog/"+string(runID)+"/") {
		m := attemptKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(e.s3.get(t, k)))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		dst := map[string]map[string][]int{"start": a.starts, "stop": a.stops, "done": a.results}[m[2]]
		dst[m[1]] = append(dst[m[1]], v)
	}
	return a
}

// check fails t unless each of n trials ended once with the sum of squares of 1..steps (an
// unpreempted run's result) and started from scratch once; it returns the steps trained
// twice in all (a stopped attempt's last step past the copy the next one started from) and
// the attempts that resumed.
func (a attempts) check(t *testing.T, n, steps int) (twice, resumed int) {
	t.Helper()
	want := 0
	for s := 1; s <= steps; s++ {
		want += s * s
	}
	for i := range n {
		k := fmt.Sprint(i)
		if r := a.results[k]; len(r) != 1 || r[0] != want {
			t.Errorf("trial %d ended with %v, want once with %d (an unpreempted run's)", i, r, want)
		}
		starts := slices.Sorted(slices.Values(a.starts[k]))
		if scratch := len(starts) - len(slices.DeleteFunc(slices.Clone(starts), func(s int) bool { return s == 0 })); scratch != 1 {
			t.Errorf("trial %d started from scratch %d times (starts at %v), want once", i, scratch, starts)
		}
		resumed += len(starts) - 1
		// Each stop is followed by the start that resumes it: the lowest start past the
		// previous one pairs with the lowest stop.
		stops := slices.Sorted(slices.Values(a.stops[k]))
		for j, stop := range stops {
			if j+1 < len(starts) {
				twice += max(0, stop-starts[j+1])
			}
		}
	}
	return twice, resumed
}

// admitted says whether the Job runs: Kueue admitted it (spec.suspend false).
func (e *env) admitted(t *testing.T, name string) bool {
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j.Spec.Suspend != nil && !*j.Spec.Suspend
}

// urgentJob is a Job of the higher WorkloadPriorityClass in the LocalQueue that needs
// cpu of the quota for a few seconds, created suspended as the Kueue overlay's are.
func urgentJob(cpu string, seconds int) *batchv1.Job {
	one := int32(1)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "urgent", Labels: map[string]string{
			"kueue.x-k8s.io/queue-name": cluster.KueueLocalQueue, "kueue.x-k8s.io/priority-class": cluster.KueueHigh}},
		Spec: batchv1.JobSpec{Suspend: new(bool), Parallelism: &one, Completions: &one,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, HostNetwork: true,
				Containers: []corev1.Container{{Name: "urgent", Image: cluster.RunallImage, ImagePullPolicy: corev1.PullNever,
					Command: []string{"sh", "-c", fmt.Sprintf("sleep %d", seconds)},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Mi")}}}}}}},
	}
}

// TestKueuePreemptsClaimsSweep (issue 46, point 3): the claims Job of examples/k8s/kueue,
// admitted by Kueue within the ClusterQueue's quota, is preempted mid-sweep by a Job of a
// higher WorkloadPriorityClass that needs that quota: Kueue suspends it, its Pods get
// SIGTERM, and runall keeps each trial's copy (waiting for the one in progress:
// RUNALL_GRACE_CHECKPOINT). When the urgent Job ends, Kueue admits the sweep again and every
// trial resumes from its copy: none starts from scratch twice, each ends once with an
// unpreempted run's result, and no Pod counts as failed.
func TestKueuePreemptsClaimsSweep(t *testing.T) {
	e := setup(t)
	e.c.StartKueue(t, e.ns)
	const n, steps = 6, 10
	t0 := time.Now()
	uid := e.apply(t, "kueue/claims", stepsFile(n, steps), nil)
	waitFor(t, time.Minute, "Kueue to admit the sweep", func() bool { return e.admitted(t, claimsJob) })
	e.waitCheckpoints(t, uid)
	ctx := context.Background()
	if _, err := e.c.Client.BatchV1().Jobs(e.ns).Create(ctx, urgentJob("200m", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "Kueue to preempt the sweep (suspend its Job)", func() bool { return !e.admitted(t, claimsJob) })
	if done, _ := e.outcomes(t, uid); len(done) == n {
		t.Fatalf("every trial ended before the preemption: nothing left to resume (trials too short)")
	}
	if end := e.waitJobEnd(t, "urgent", 3*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the urgent Job ended %s, want Complete", end)
	}
	if end := e.waitJobEnd(t, claimsJob, 4*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the sweep ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	twice, resumed := e.attempts(t, uid).check(t, n, steps)
	if resumed < 1 {
		t.Errorf("no trial resumed from its copy after the preemption")
	}
	if twice > resumed {
		t.Errorf("%d steps trained twice over %d resumptions: more than one checkpoint interval each", twice, resumed)
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(ctx, claimsJob, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Failed != 0 {
		t.Errorf("the sweep's Job counts %d failed Pods, want 0: a preemption spends no backoffLimit", j.Status.Failed)
	}
	e.checkResults(t, "catdog-claims/"+string(uid)+"/", n)
	t.Logf("measured: %d trials of %d steps, 1 preemption: 0 restarted from scratch, %d attempts resumed, %d steps trained twice in all, sweep %v",
		n, steps, resumed, twice, time.Since(t0).Round(time.Second))
}

// TestClaimsJobScaled (issue 46, point 4): the claims Job's parallelism patched 2 -> 4 -> 1
// while it runs (no Kueue): the two Pods added take trials from the queue, the three the Job
// controller removes give theirs back at their copies, and the one left resumes them; every
// trial runs once to its end, none from scratch twice.
func TestClaimsJobScaled(t *testing.T) {
	e := setup(t)
	const n, steps = 8, 8
	two := int32(2)
	uid := e.apply(t, "claims", stepsFile(n, steps), func(ex *example) { ex.job.Spec.Parallelism = &two })
	e.waitCheckpoints(t, uid)
	e.scale(t, 4)
	waitFor(t, 2*time.Minute, "4 Pods running", func() bool { return len(e.running(t)) >= 4 })
	twice, resumed := e.scaledDownToEnd(t, uid, n, steps)
	e.checkResults(t, "catdog-claims/"+string(uid)+"/", n)
	t.Logf("measured: %d trials of %d steps, parallelism 2 -> 4 -> 1: 0 restarted from scratch, %d attempts resumed, %d steps trained twice in all", n, steps, resumed, twice)
}

// scaledDownToEnd takes the claims Job of run uid, scaled up to 4 Pods, down to 1 once each
// of the 4 holds a trial's copy, and waits for its end: complete, every one of its n trials
// of steps steps run once (none from scratch twice), at least one resumed from its copy after
// the scale-down, and no more steps trained twice than resumptions (at most a checkpoint
// interval each). It returns the steps trained twice and the attempts resumed.
func (e *env) scaledDownToEnd(t *testing.T, uid types.UID, n, steps int) (twice, resumed int) {
	t.Helper()
	waitFor(t, 2*time.Minute, "copies of 4 trials: one on each of the 4 Pods", func() bool { return e.checkpointed(t, uid) >= 4 })
	e.scale(t, 1)
	waitFor(t, 2*time.Minute, "one Pod left", func() bool { return len(e.running(t)) == 1 })
	if end := e.waitJobEnd(t, claimsJob, 5*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	twice, resumed = e.attempts(t, uid).check(t, n, steps)
	if resumed < 1 {
		t.Errorf("no trial resumed from its copy after the scale-down to 1")
	}
	if twice > resumed {
		t.Errorf("%d steps trained twice over %d resumptions: more than one checkpoint interval each", twice, resumed)
	}
	return twice, resumed
}

// checkpointed is how many trials have a copy kept under the claims prefix.
func (e *env) checkpointed(t *testing.T, runID types.UID) int {
	prefix := "catdog-claims/" + string(runID) + "/checkpoints/"
	trials := map[string]bool{}
	for _, k := range e.s3.keys(t, prefix) {
		first, _, _ := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		trials[first] = true
	}
	return len(trials)
}
