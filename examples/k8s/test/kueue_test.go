package k8stest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The Kueue overlays (examples/k8s/kueue): the two sweep Jobs, queued.
const (
	kueueQueueLabel    = "kueue.x-k8s.io/queue-name"
	kueuePriorityLabel = "kueue.x-k8s.io/priority-class"
)

// queuesFile reads examples/k8s/kueue/queues.yaml: each document's kind and name.
func queuesFile(t *testing.T) map[string][]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sDir, "kueue", "queues.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]any{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("kueue/queues.yaml: %v", err)
		}
		kind, _ := doc["kind"].(string)
		out[kind] = append(out[kind], doc)
	}
}

func name(doc map[string]any) string {
	md, _ := doc["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// TestKueueOverlays: examples/k8s/kueue/job and /claims are the Indexed Job and the claims
// Job unchanged but for the queue (a LocalQueue and a WorkloadPriorityClass that queues.yaml
// defines), spec.suspend (Kueue starts an admitted Job; created suspended, nothing runs
// before it is admitted, webhook or not), and, for the claims, runall waiting for each
// trial's next copy on SIGTERM, with the grace period leaving room for it.
func TestKueueOverlays(t *testing.T) {
	q := queuesFile(t)
	names := func(kind string) map[string]bool {
		m := map[string]bool{}
		for _, d := range q[kind] {
			m[name(d)] = true
		}
		return m
	}
	for _, kind := range []string{"ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"} {
		if len(q[kind]) == 0 {
			t.Errorf("kueue/queues.yaml: no %s", kind)
		}
	}
	for _, base := range []string{"job", "claims"} {
		var job, orig *batchv1.Job
		if base == "claims" {
			orig, _ = renderClaims(t)
		} else {
			orig = render(t, base).job
		}
		job = render(t, filepath.Join("kueue", base)).job
		what := "kueue/" + base
		if job.Spec.Suspend == nil || !*job.Spec.Suspend {
			t.Errorf("%s: spec.suspend unset: the Job would start before Kueue admits it where its webhook is off", what)
		}
		if lq := job.Labels[kueueQueueLabel]; !names("LocalQueue")[lq] {
			t.Errorf("%s: %s %q, not a LocalQueue of kueue/queues.yaml", what, kueueQueueLabel, lq)
		}
		if pc := job.Labels[kueuePriorityLabel]; !names("WorkloadPriorityClass")[pc] {
			t.Errorf("%s: %s %q, not a WorkloadPriorityClass of kueue/queues.yaml", what, kueuePriorityLabel, pc)
		}
		// Nothing else changed.
		same := job.DeepCopy()
		same.Spec.Suspend = orig.Spec.Suspend
		delete(same.Labels, kueueQueueLabel)
		delete(same.Labels, kueuePriorityLabel)
		c := &same.Spec.Template.Spec.Containers[0]
		if base == "claims" {
			if v := envValue(c.Env, "RUNALL_GRACE_CHECKPOINT"); v != "1" {
				t.Errorf("%s: RUNALL_GRACE_CHECKPOINT = %q, want 1: a preempted Pod keeps each trial's copy in progress", what, v)
			}
			grace := runallGrace(t, what, c.Args)
			if tg := same.Spec.Template.Spec.TerminationGracePeriodSeconds; tg == nil || *tg < int64(3*grace.Seconds()) {
				t.Errorf("%s: terminationGracePeriodSeconds %v, want at least 3x --grace (%v): the wait for a copy, the trial's stop, the upload", what, deref(tg), grace)
			}
			c.Env = c.Env[:len(c.Env)-1]
		}
		if !reflect.DeepEqual(same, orig) {
			a, _ := json.Marshal(orig)
			b, _ := json.Marshal(same)
			t.Errorf("%s changes more than the queue and spec.suspend:\n%s\n%s", what, a, b)
		}
	}
}

// The elastic Job (examples/k8s/kueue/claims-elastic): what Kueue's ElasticJobsViaWorkloadSlices
// (alpha) reads on a Job.
const (
	kueueElasticAnnotation = "kueue.x-k8s.io/elastic-job" // "true": resized by slices, not re-queued
	kueueElasticGate       = "kueue.x-k8s.io/elastic-job" // the scheduling gate Kueue lifts when it admits a slice
)

// TestKueueElasticOverlay: kueue/claims-elastic is kueue/claims but for the annotation that
// makes it an elastic Job and the scheduling gate that holds a scale-up's Pods until Kueue
// admits their slice (its webhook adds the gate; the overlay says it for a cluster without).
func TestKueueElasticOverlay(t *testing.T) {
	orig := render(t, filepath.Join("kueue", "claims")).job
	job := render(t, filepath.Join("kueue", "claims-elastic")).job
	if v := job.Annotations[kueueElasticAnnotation]; v != "true" {
		t.Errorf("kueue/claims-elastic: annotation %s = %q, want \"true\"", kueueElasticAnnotation, v)
	}
	gates := job.Spec.Template.Spec.SchedulingGates
	if len(gates) != 1 || gates[0].Name != kueueElasticGate {
		t.Errorf("kueue/claims-elastic: schedulingGates %v, want the one %s", gates, kueueElasticGate)
	}
	same := job.DeepCopy()
	delete(same.Annotations, kueueElasticAnnotation)
	if len(same.Annotations) == 0 {
		same.Annotations = orig.Annotations
	}
	same.Spec.Template.Spec.SchedulingGates = orig.Spec.Template.Spec.SchedulingGates
	if !reflect.DeepEqual(same, orig) {
		a, _ := json.Marshal(orig)
		b, _ := json.Marshal(same)
		t.Errorf("kueue/claims-elastic changes more than the annotation and the gate:\n%s\n%s", a, b)
	}
}
