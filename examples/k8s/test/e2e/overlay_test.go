package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/runall/runall/examples/k8s/test/cluster"
)

const k8sDir = "../.." // examples/k8s

// example is one overlay of examples/k8s rendered as kubectl apply -k would: one workload
// (a Pod or a Job) and its ConfigMap.
type example struct {
	pod       *corev1.Pod
	job       *batchv1.Job
	configMap *corev1.ConfigMap
	access    access // examples/k8s/progress's: what lets runall patch its Pod
}

// access is a ServiceAccount and what its Role may do.
type access struct {
	account *corev1.ServiceAccount
	role    *rbacv1.Role
	binding *rbacv1.RoleBinding
}

func render(t *testing.T, dir string) example {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(k8sDir, dir))
	if err != nil {
		t.Fatalf("kustomize examples/k8s/%s: %v", dir, err)
	}
	var ex example
	for _, r := range res.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var dst any
		switch r.GetKind() {
		case "Pod":
			ex.pod = new(corev1.Pod)
			dst = ex.pod
		case "Job":
			ex.job = new(batchv1.Job)
			dst = ex.job
		case "ConfigMap":
			ex.configMap = new(corev1.ConfigMap)
			dst = ex.configMap
		case "ServiceAccount":
			ex.access.account = new(corev1.ServiceAccount)
			dst = ex.access.account
		case "Role":
			ex.access.role = new(rbacv1.Role)
			dst = ex.access.role
		case "RoleBinding":
			ex.access.binding = new(rbacv1.RoleBinding)
			dst = ex.access.binding
		default:
			t.Fatalf("examples/k8s/%s: unexpected %s", dir, r.GetKind())
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("examples/k8s/%s: %v", dir, err)
		}
	}
	return ex
}

// The test overlay: only what a laptop cluster lacks, and a task file of the test's own.
const (
	tasksConfigMap = "runall-test-tasks" // holds tasks.yml, mounted over the image's
	tasksVolume    = "test-tasks"
	fakeGPUs       = "32GiB"
)

// overlay changes what the example cannot have on this cluster: the image (built by
// scripts/k8s-image.sh, never pulled), hostNetwork (the CNI is loopback alone), resources
// (no nvidia.com/gpu, a node of 2 CPUs: the GPU is simulated by RUNALL_FAKE_GPUS), the S3
// endpoint (the test's MinIO on loopback), the live page's port (hostNetwork Pods share the
// node's ports: 127.0.0.1:0 takes a free one), and the task file (the test's own, from a
// ConfigMap over the image's tasks.yml).
func (ex example) overlay(s3Endpoint string) example {
	spec := ex.podSpec()
	spec.HostNetwork = true
	c := &spec.Containers[0]
	c.Image = cluster.RunallImage
	c.ImagePullPolicy = corev1.PullNever
	c.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tasksVolume, MountPath: "/opt/catdog/tasks.yml", SubPath: "tasks.yml", ReadOnly: true})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: tasksVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: tasksConfigMap}}}})
	ex.configMap.Data["AWS_ENDPOINT_URL_S3"] = s3Endpoint
	ex.configMap.Data["RUNALL_SERVE"] = "127.0.0.1:0"
	ex.configMap.Data["RUNALL_FAKE_GPUS"] = fakeGPUs
	return ex
}

func (ex example) podSpec() *corev1.PodSpec {
	if ex.pod != nil {
		return &ex.pod.Spec
	}
	return &ex.job.Spec.Template.Spec
}

// overlaid are the fields overlay may change, as changedPaths names them; a path under one
// of them counts as that one.
var overlaid = []string{"spec.hostNetwork", "spec.containers.0.image", "spec.containers.0.imagePullPolicy",
	"spec.containers.0.resources", "spec.containers.0.volumeMounts.3", "spec.volumes.3",
	"data.AWS_ENDPOINT_URL_S3", "data.RUNALL_SERVE", "data.RUNALL_FAKE_GPUS"}

// changedPaths lists the JSON paths (dotted, list items by index) where a and b differ.
func changedPaths(t *testing.T, a, b any) []string {
	t.Helper()
	var ma, mb any
	for _, p := range []struct {
		v   any
		dst *any
	}{{a, &ma}, {b, &mb}} {
		data, err := json.Marshal(p.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, p.dst); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	diff("", ma, mb, &out)
	return out
}

func diff(path string, a, b any, out *[]string) {
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	la, okLA := a.([]any)
	lb, okLB := b.([]any)
	switch {
	case okA && okB:
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		for k := range keys {
			diff(join(path, k), ma[k], mb[k], out)
		}
	case okLA && okLB:
		for i := range max(len(la), len(lb)) {
			var x, y any
			if i < len(la) {
				x = la[i]
			}
			if i < len(lb) {
				y = lb[i]
			}
			diff(join(path, fmt.Sprint(i)), x, y, out)
		}
	case !reflect.DeepEqual(a, b):
		*out = append(*out, path)
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// checkOverlay fails t if the overlay changed a field outside overlaid, in the workload's Pod
// spec, in the rest of the workload, or in its ConfigMap.
func checkOverlay(t *testing.T, dir string, ex example) {
	t.Helper()
	orig := render(t, dir)
	pairs := [][2]any{{orig.configMap, ex.configMap}}
	if orig.pod != nil {
		pairs = append(pairs, [2]any{orig.pod, ex.pod})
	} else {
		pairs = append(pairs, [2]any{orig.job, ex.job})
	}
	for _, p := range pairs {
		for _, path := range changedPaths(t, p[0], p[1]) {
			path = strings.TrimPrefix(path, "spec.template.")
			if !slices.ContainsFunc(overlaid, func(o string) bool { return path == o || strings.HasPrefix(path, o+".") }) {
				t.Errorf("examples/k8s/%s: the test overlay changed %s, which is not one of what a laptop cluster lacks", dir, path)
			}
		}
	}
}

// TestOverlayChangesNothingElse: the overlay of every example touches only the fields it is
// allowed to (no cluster needed).
func TestOverlayChangesNothingElse(t *testing.T) {
	for _, dir := range []string{"pod", "job", "claims"} {
		checkOverlay(t, dir, render(t, dir).overlay("http://127.0.0.1:9000"))
	}
	// and the check catches a change it does not allow
	ex := render(t, "claims").overlay("http://127.0.0.1:9000")
	ex.job.Spec.Template.Spec.TerminationGracePeriodSeconds = new(int64)
	if got := changedPaths(t, render(t, "claims").job, ex.job); !slices.Contains(got, "spec.template.spec.terminationGracePeriodSeconds") {
		t.Errorf("changedPaths missed a changed grace period: %v", got)
	}
}
