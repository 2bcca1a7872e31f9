// Package e2e applies the manifests of examples/k8s to a real one-node cluster (package
// cluster) and watches the Job controller and the kubelet act on them, runall in the Pods,
// MinIO as their S3. The tests skip unless K8S_E2E=1 (make k8s-e2e).
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runall/runall/examples/k8s/test/cluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.CleanupImages()
	os.Exit(code)
}

// env is one test's cluster, MinIO and namespace.
type env struct {
	c  *cluster.Cluster
	s3 *minio
	ns string
}

func setup(t *testing.T) *env {
	t.Helper()
	return setupWith(t, cluster.Options{})
}

// setupWith is setup on a cluster of options o.
func setupWith(t *testing.T, o cluster.Options) *env {
	t.Helper()
	cluster.Skip(t)
	e := &env{s3: startMinIO(t), ns: "e2e"}
	e.c = cluster.StartWith(t, o, cluster.Images(t)...)
	ctx := context.Background()
	if _, err := e.c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// secret.example.yaml, filled in with the test MinIO's keys, as a user would.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "runall-s3"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": minioUser, "AWS_SECRET_ACCESS_KEY": minioSecret}}
	if _, err := e.c.Client.CoreV1().Secrets(e.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// apply renders examples/k8s/DIR, overlays it, checks the overlay, and creates the test's
// task file, the ConfigMap and the workload. It returns the workload's uid: its RUN_ID.
func (e *env) apply(t *testing.T, dir, tasks string, edit func(*example)) types.UID {
	t.Helper()
	ex := render(t, dir).overlay(e.s3.endpoint)
	checkOverlay(t, dir, ex)
	if edit != nil {
		edit(&ex)
	}
	ctx := context.Background()
	core := e.c.Client.CoreV1()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tasksConfigMap}, Data: map[string]string{"tasks.yml": tasks}}
	if _, err := core.ConfigMaps(e.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.ConfigMaps(e.ns).Create(ctx, ex.configMap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createAccess(t, ex.access)
	if ex.pod != nil {
		p, err := core.Pods(e.ns).Create(ctx, ex.pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create the Pod of examples/k8s/%s: %v", dir, err)
		}
		return p.UID
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Create(ctx, ex.job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the Job of examples/k8s/%s: %v", dir, err)
	}
	return j.UID
}

// trialsFile is the test's task file: n trials on a simulated GPU (7 GiB each), each writing
// a marker named by a fresh uuid (so a trial run twice leaves two) holding its shard, then
// sleeping, uploaded under s3://$S3_BUCKET/catdog/$RUN_ID/tI/.
func trialsFile(n int, sleep string) string {
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
        cmd: >-
          mkdir -p "$OUTPUT_DIR/t<i>"
          && echo "shard=${JOB_COMPLETION_INDEX:-none}" > "$OUTPUT_DIR/t<i>/ran-$(cat /proc/sys/kernel/random/uuid)"
          && sleep %s
        gpu-memory: 7GiB
        upload:
          - from: ${OUTPUT_DIR}/t<i>/
            to: s3://${S3_BUCKET}/catdog/${RUN_ID}/t<i>/
`, strings.Join(idx, ", "), sleep)
}

var markerKey = regexp.MustCompile(`^catdog/[^/]+/t(\d+)/ran-[0-9a-f-]+$`)

// runsPerTrial counts the markers each trial left in MinIO under the run.
func (e *env) runsPerTrial(t *testing.T, runID types.UID) map[string]int {
	t.Helper()
	runs := map[string]int{}
	for _, k := range e.s3.keys(t, "catdog/"+string(runID)+"/") {
		if m := markerKey.FindStringSubmatch(k); m != nil {
			runs[m[1]]++
		}
	}
	return runs
}

// checkEachOnce fails t unless each of n trials ran exactly once.
func (e *env) checkEachOnce(t *testing.T, runID types.UID, n int) {
	t.Helper()
	runs := e.runsPerTrial(t, runID)
	for i := range n {
		if got := runs[fmt.Sprint(i)]; got != 1 {
			t.Errorf("trial %d ran %d times (markers in MinIO under catdog/%s/), want once", i, got, runID)
		}
	}
	if len(runs) != n {
		t.Errorf("markers of %d trials, want %d: %v", len(runs), n, runs)
	}
}

// waitFor polls cond every half second until it holds or d passes; what names it.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, d)
		}
	}
}

// jobCondition is the Job's condition of that type, when it is true.
func (e *env) jobCondition(t *testing.T, name string, typ batchv1.JobConditionType) *batchv1.JobCondition {
	t.Helper()
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// waitJobEnd waits for the Job to complete or fail, and returns which.
func (e *env) waitJobEnd(t *testing.T, name string, d time.Duration) batchv1.JobConditionType {
	t.Helper()
	var end batchv1.JobConditionType
	waitFor(t, d, "job "+name+" to end", func() bool {
		for _, typ := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
			if e.jobCondition(t, name, typ) != nil {
				end = typ
				return true
			}
		}
		return false
	})
	return end
}

// pods lists the namespace's Pods.
func (e *env) pods(t *testing.T) []corev1.Pod {
	t.Helper()
	l, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// logs is every Pod's log of the trials container, for a failure message.
func (e *env) logs(t *testing.T) string {
	var b strings.Builder
	for _, p := range e.pods(t) {
		fmt.Fprintf(&b, "--- %s (%s)\n%s", p.Name, p.Status.Phase, e.c.PodLog(t, e.ns, p.Name, "trials"))
	}
	return b.String()
}

// checkResults fails t unless the results.json files under prefix in MinIO (runall's own
// record: each shard's, or the claims' merged one) list each of n trials "ok" once in all.
func (e *env) checkResults(t *testing.T, prefix string, n int) {
	t.Helper()
	ok := map[string]int{}
	files := 0
	for _, k := range e.s3.keys(t, prefix) {
		if !strings.HasSuffix(k, "/results.json") && k != prefix+"results.json" {
			continue
		}
		files++
		var res struct {
			Tasks []struct{ Name, Status string }
		}
		if err := json.Unmarshal([]byte(e.s3.get(t, k)), &res); err != nil {
			t.Fatalf("s3://%s/%s: %v", bucket, k, err)
		}
		for _, task := range res.Tasks {
			if task.Status == "ok" {
				ok[task.Name]++
			}
		}
	}
	if files == 0 {
		t.Fatalf("no results.json under s3://%s/%s", bucket, prefix)
	}
	for i := range n {
		if name := fmt.Sprintf("trial %d", i); ok[name] != 1 {
			t.Errorf("%q is ok in %d of the %d results.json under %s, want 1", name, ok[name], files, prefix)
		}
	}
}

// createAccess creates the ServiceAccount, Role and RoleBinding of an example that has them.
func (e *env) createAccess(t *testing.T, a access) {
	t.Helper()
	ctx := context.Background()
	var err error
	if a.account != nil {
		_, err = e.c.Client.CoreV1().ServiceAccounts(e.ns).Create(ctx, a.account, metav1.CreateOptions{})
	}
	if err == nil && a.role != nil {
		_, err = e.c.Client.RbacV1().Roles(e.ns).Create(ctx, a.role, metav1.CreateOptions{})
	}
	if err == nil && a.binding != nil {
		_, err = e.c.Client.RbacV1().RoleBindings(e.ns).Create(ctx, a.binding, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}
