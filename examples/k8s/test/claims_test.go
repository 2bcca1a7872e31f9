package k8stest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const claimsDir = "../claims" // examples/k8s/claims: the Job whose Pods share trials through claims

// renderClaims runs the claims kustomization and strictly decodes its Job and ConfigMap.
func renderClaims(t *testing.T) (*batchv1.Job, *corev1.ConfigMap) {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), claimsDir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", claimsDir, err)
	}
	var job *batchv1.Job
	var cm *corev1.ConfigMap
	for _, r := range resMap.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		var dst any
		switch api, kind := r.GetApiVersion(), r.GetKind(); {
		case api == "batch/v1" && kind == "Job" && job == nil:
			job = new(batchv1.Job)
			dst = job
		case api == "v1" && kind == "ConfigMap" && cm == nil:
			cm = new(corev1.ConfigMap)
			dst = cm
		default:
			t.Fatalf("unexpected resource %s %s %q in %s", api, kind, r.GetName(), claimsDir)
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("%s %q: %v", r.GetKind(), r.GetName(), err)
		}
	}
	if job == nil || cm == nil {
		t.Fatalf("%s: want a Job and a ConfigMap; got job=%v configmap=%v", claimsDir, job != nil, cm != nil)
	}
	return job, cm
}

// TestClaimsJob checks the claims variant: N Pods that share one queue under RUNALL_CLAIMS,
// with no sharding, a prefix of the Job's run, and the same Pod properties as the others.
func TestClaimsJob(t *testing.T) {
	job, cm := renderClaims(t)
	spec := job.Spec
	switch {
	case spec.Parallelism == nil || *spec.Parallelism < 2:
		t.Errorf("claims job: parallelism %v, want N >= 2 Pods sharing the trials", deref(spec.Parallelism))
	case spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion:
		if spec.Completions == nil || *spec.Completions != *spec.Parallelism {
			t.Errorf("claims job: an Indexed Job needs completions == parallelism, got %v and %v", deref(spec.Completions), *spec.Parallelism)
		}
	case spec.Completions != nil:
		t.Errorf("claims job: completions %d on a plain Job: leave it unset (a work queue: done when a Pod succeeded and all ended)", *spec.Completions)
	}
	if spec.PodReplacementPolicy == nil || *spec.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("claims job: podReplacementPolicy = %v, want Failed: a replacement Pod must wait for the one it replaces to end (its grace period, its upload)", deref(spec.PodReplacementPolicy))
	}
	if !failsJobOnExit(spec.PodFailurePolicy, 2) {
		t.Errorf("claims job: podFailurePolicy should FailJob on exit code 2 (a task-file error, or another file against the prefix)")
	}
	checkPodSpec(t, "claims job", &spec.Template.Spec, cm)

	c := spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		if e.Name == "RUNALL_SHARDS" || e.Name == "RUNALL_SHARD" {
			t.Errorf("claims job: sets %s; claims and shards are alternatives (runall refuses both)", e.Name)
		}
	}
	if fr := envFrom(c.Env, "RUN_ID"); fr == nil || fr.FieldRef == nil || !strings.Contains(fr.FieldRef.FieldPath, "controller-uid") {
		t.Errorf("claims job: RUN_ID should be the Job's uid, so that its Pods share one queue and each Job is a new sweep")
	}
	const uid = "0b6f5c3e-uid-of-the-job"
	claims := expandK8s(t, c.Env, cm, "RUNALL_CLAIMS", uid)
	if !strings.HasPrefix(claims, "s3://") || !strings.HasSuffix(claims, "/") || !strings.Contains(claims, uid) {
		t.Errorf("claims job: RUNALL_CLAIMS expands to %q, want an s3:// prefix ending in / and holding the run id", claims)
	}
	for _, to := range uploadDestinations(t, cm, uid) {
		if strings.HasPrefix(claims, to) {
			t.Errorf("claims job: the queue %s lies under the upload %s, whose sync could delete it", claims, to)
		}
	}
}

// expandK8s expands env var name as the kubelet does: $(VAR) from the ConfigMap (envFrom)
// and the variables before it in env; RUN_ID is runID. An unset $(VAR) fails.
func expandK8s(t *testing.T, env []corev1.EnvVar, cm *corev1.ConfigMap, name, runID string) string {
	t.Helper()
	vars := map[string]string{}
	for k, v := range cm.Data {
		vars[k] = v
	}
	for _, e := range env {
		if e.Name == name {
			return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(e.Value, func(m string) string {
				v, ok := vars[m[2:len(m)-1]]
				if !ok {
					t.Errorf("%s: %s is not set before it (the kubelet would leave it as is)", name, m)
				}
				return v
			})
		}
		if e.Name == "RUN_ID" {
			vars[e.Name] = runID
		} else if e.ValueFrom == nil {
			vars[e.Name] = e.Value
		}
	}
	t.Errorf("%s is not set", name)
	return ""
}

// uploadDestinations is every s3 upload to: of examples/train/tasks.yml, ${VAR}s expanded
// from the ConfigMap and RUN_ID.
func uploadDestinations(t *testing.T, cm *corev1.ConfigMap, runID string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(trainDir, "tasks.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s*to:\s*(s3://\S+)`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, os.Expand(m[1], func(k string) string {
			if k == "RUN_ID" {
				return runID
			}
			return cm.Data[k]
		}))
	}
	if len(out) == 0 {
		t.Fatalf("tasks.yml has no s3 upload to: check the claims prefix against")
	}
	return slices.Compact(out)
}

func envFrom(env []corev1.EnvVar, name string) *corev1.EnvVarSource {
	for _, e := range env {
		if e.Name == name {
			return e.ValueFrom
		}
	}
	return nil
}
