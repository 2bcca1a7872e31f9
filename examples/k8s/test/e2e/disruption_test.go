package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const claimsJob = "runall-catdog-claims"

// checkpointedFile is the test's task file for the disruption tests: n trials of steps
// seconds, one at a time per Pod (20 GiB of a 32 GiB simulated GPU), each saving its step to
// its checkpoint every second and resuming from it; a trial writes done-UUID when it ends and
// resumed-UUID (holding the step it resumed from) when runall restored its checkpoint.
func checkpointedFile(n, steps int) string {
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
          s=$(cat "$ck/step" 2>/dev/null || echo 0)
          [ -n "$RUNALL_RESUMED" ] && echo "$s" > "$out/resumed-$(cat /proc/sys/kernel/random/uuid)"
          while [ "$s" -lt %d ]; do sleep 1; s=$((s+1)); echo "$s" > "$ck/step"; echo "runall-checkpoint step=$s"; done
          echo done > "$out/done-$(cat /proc/sys/kernel/random/uuid)"
        checkpoint: /tmp/checkpoints/t<i>
        gpu-memory: 20GiB
        upload:
          - from: ${OUTPUT_DIR}/t<i>/
            to: s3://${S3_BUCKET}/catdog/${RUN_ID}/t<i>/
`, strings.Join(idx, ", "), steps)
}

var outcomeKey = regexp.MustCompile(`^catdog/[^/]+/t(\d+)/(done|resumed)-[0-9a-f-]+$`)

// outcomes counts, per trial, its ends (done) and its resumptions.
func (e *env) outcomes(t *testing.T, runID types.UID) (done, resumed map[string]int) {
	t.Helper()
	done, resumed = map[string]int{}, map[string]int{}
	for _, k := range e.s3.keys(t, "catdog/"+string(runID)+"/") {
		if m := outcomeKey.FindStringSubmatch(k); m != nil && m[2] == "done" {
			done[m[1]]++
		} else if m != nil {
			resumed[m[1]]++
		}
	}
	return done, resumed
}

// checkEachEndsOnce fails t unless each of n trials ended once, and returns how many resumed.
func (e *env) checkEachEndsOnce(t *testing.T, runID types.UID, n int) int {
	t.Helper()
	done, resumed := e.outcomes(t, runID)
	for i := range n {
		if got := done[fmt.Sprint(i)]; got != 1 {
			t.Errorf("trial %d ended %d times, want once", i, got)
		}
	}
	total := 0
	for _, r := range resumed {
		total += r
	}
	return total
}

// waitCheckpoints waits until runall kept a checkpoint of some trial under the claims prefix.
func (e *env) waitCheckpoints(t *testing.T, runID types.UID) {
	t.Helper()
	waitFor(t, 2*time.Minute, "a checkpoint under the claims prefix", func() bool {
		return len(e.s3.keys(t, "catdog-claims/"+string(runID)+"/checkpoints/")) > 0
	})
}

// running lists the names of the namespace's Running Pods not being deleted.
func (e *env) running(t *testing.T) []string {
	var names []string
	for _, p := range e.pods(t) {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// disruptionTarget says whether the Pod carries the DisruptionTarget condition; false when
// the Pod is gone.
func (e *env) disruptionTarget(t *testing.T, name string) bool {
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestClaimsJobEvictedAndDeleted: mid-sweep, one Pod of the claims Job is evicted through the
// Eviction API (as a drain or a preemption does) and another deleted with a plain DELETE. The
// evicted one gets DisruptionTarget, which podFailurePolicy ignores: replaced without spending
// backoffLimit; the deleted one does not, and spends one. Both gave their trials back, which
// resume from their checkpoints on other Pods; every trial ends once; the Job completes.
func TestClaimsJobEvictedAndDeleted(t *testing.T) {
	e := setup(t)
	const n = 6
	uid := e.apply(t, "claims", checkpointedFile(n, 8), nil)
	e.waitCheckpoints(t, uid)
	var pods []string
	waitFor(t, time.Minute, "3 Pods running", func() bool { pods = e.running(t); return len(pods) >= 3 })
	ctx := context.Background()
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pods[0], Namespace: e.ns}}
	if err := e.c.Client.PolicyV1().Evictions(e.ns).Evict(ctx, ev); err != nil {
		t.Fatalf("evict %s: %v", pods[0], err)
	}
	if !e.disruptionTarget(t, pods[0]) {
		t.Errorf("evicted %s: no DisruptionTarget condition", pods[0])
	}
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, pods[1], metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", pods[1], err)
	}
	e.checkNoOverlap(t, 10*time.Second)
	if e.disruptionTarget(t, pods[1]) {
		t.Errorf("deleted %s: a DisruptionTarget condition, which a plain DELETE does not set", pods[1])
	}
	if end := e.waitJobEnd(t, claimsJob, 4*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	if resumed := e.checkEachEndsOnce(t, uid, n); resumed < 2 {
		t.Errorf("%d trials resumed from a checkpoint, want the evicted and the deleted Pods' two", resumed)
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(ctx, claimsJob, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Failed != 1 {
		t.Errorf("the Job counts %d failed Pods, want 1: the deleted one spends backoffLimit, the evicted one not", j.Status.Failed)
	}
}

// checkNoOverlap samples the Pods for d: never more than parallelism of them may be neither
// Succeeded nor Failed (podReplacementPolicy: Failed: a replacement waits for the Pod it
// replaces to end, so two runalls never hold one Pod's GPU).
func (e *env) checkNoOverlap(t *testing.T, d time.Duration) {
	t.Helper()
	par := int(*render(t, "claims").job.Spec.Parallelism)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var live []string
		for _, p := range e.pods(t) {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				live = append(live, p.Name)
			}
		}
		if len(live) > par {
			t.Errorf("%d Pods not ended at once (%v), want at most parallelism %d", len(live), live, par)
			return
		}
	}
}

// TestClaimsJobSuspendedAndResumed: the claims Job suspended mid-sweep (spec.suspend, as
// Kueue preempts a workload) loses its Pods without counting them failed; resumed, new Pods
// go on from the checkpoints, and every trial ends once.
func TestClaimsJobSuspendedAndResumed(t *testing.T) {
	e := setup(t)
	const n = 6
	uid := e.apply(t, "claims", checkpointedFile(n, 8), nil)
	e.waitCheckpoints(t, uid)
	e.suspend(t, true)
	waitFor(t, 2*time.Minute, "the suspended Job's Pods to go", func() bool {
		return e.jobCondition(t, claimsJob, batchv1.JobSuspended) != nil && len(e.pods(t)) == 0
	})
	if done, _ := e.outcomes(t, uid); len(done) == n {
		t.Fatalf("every trial ended before the suspension took effect: nothing left to resume (trials too short)")
	}
	e.suspend(t, false)
	if end := e.waitJobEnd(t, claimsJob, 4*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	if resumed := e.checkEachEndsOnce(t, uid, n); resumed < 1 {
		t.Errorf("no trial resumed from a checkpoint after the Job was resumed")
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(context.Background(), claimsJob, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Failed != 0 {
		t.Errorf("the Job counts %d failed Pods, want 0: a suspension spends no backoffLimit", j.Status.Failed)
	}
}

func (e *env) suspend(t *testing.T, on bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, on)
	if _, err := e.c.Client.BatchV1().Jobs(e.ns).Patch(context.Background(), claimsJob, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("suspend=%t: %v", on, err)
	}
}

// TestTaskFileErrorFailsJobAtOnce: a mistake in tasks.yml makes runall exit 2, and the claims
// Job's podFailurePolicy fails the Job at once: no retry Pod, backoffLimit not worked through.
func TestTaskFileErrorFailsJobAtOnce(t *testing.T) {
	e := setup(t)
	e.apply(t, "claims", "tasks:\n  - name: typo\n    cmdd: echo never\n", nil)
	if end := e.waitJobEnd(t, claimsJob, 2*time.Minute); end != batchv1.JobFailed {
		t.Fatalf("the Job ended %s, want Failed", end)
	}
	if c := e.jobCondition(t, claimsJob, batchv1.JobFailed); c.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Errorf("the Job failed for %s (%s), want %s: exit 2 is not worth a retry", c.Reason, c.Message, batchv1.JobReasonPodFailurePolicy)
	}
	ex := render(t, "claims")
	if got, par := len(e.pods(t)), int(*ex.job.Spec.Parallelism); got > par {
		t.Errorf("%d Pods, want at most the first %d: a task-file error was retried", got, par)
	}
	for _, p := range e.pods(t) {
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Terminated != nil && s.State.Terminated.ExitCode != 2 {
				t.Errorf("%s exited %d, want 2 (a task-file error)", p.Name, s.State.Terminated.ExitCode)
			}
		}
	}
}
