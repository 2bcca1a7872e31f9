// Package k8stest checks the Kubernetes manifests of examples/k8s offline: it renders the
// kustomization in-process (the kustomize library kubectl embeds), decodes every document
// strictly into the k8s.io/api types, so a misspelt or misplaced field fails, and asserts the
// properties the example depends on. It is a module of its own so that runall's go.mod does
// not pull in k8s.io/api.
package k8stest

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	k8sDir             = ".."             // examples/k8s
	trainDir           = "../../train"    // examples/train
	gpu                = "nvidia.com/gpu" // the NVIDIA device plugin's resource
	runallGraceSeconds = 20               // runall's wait between SIGTERM to the trials and SIGKILL
)

// secretish matches environment variable names whose values must come from a Secret.
var secretish = regexp.MustCompile(`(?i)(SECRET|ACCESS_KEY|TOKEN|PASSWORD)`)

// manifests is the rendered kustomization, decoded.
type manifests struct {
	pod       *corev1.Pod
	job       *batchv1.Job
	configMap *corev1.ConfigMap
}

// render runs the kustomization and strictly decodes each resource by kind.
func render(t *testing.T) manifests {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), k8sDir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", k8sDir, err)
	}
	var m manifests
	for _, r := range resMap.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		api, kind := r.GetApiVersion(), r.GetKind()
		var dst any
		switch {
		case api == "v1" && kind == "Pod" && m.pod == nil:
			m.pod = new(corev1.Pod)
			dst = m.pod
		case api == "batch/v1" && kind == "Job" && m.job == nil:
			m.job = new(batchv1.Job)
			dst = m.job
		case api == "v1" && kind == "ConfigMap" && m.configMap == nil:
			m.configMap = new(corev1.ConfigMap)
			dst = m.configMap
		default:
			t.Fatalf("unexpected resource %s %s %q in the kustomization", api, kind, r.GetName())
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("%s %q: %v", kind, r.GetName(), err)
		}
	}
	if m.pod == nil || m.job == nil || m.configMap == nil {
		t.Fatalf("want a Pod, a Job and a ConfigMap; got pod=%v job=%v configmap=%v",
			m.pod != nil, m.job != nil, m.configMap != nil)
	}
	return m
}

func TestPod(t *testing.T) {
	m := render(t)
	checkPodSpec(t, "pod", &m.pod.Spec, m.configMap)
}

func TestJob(t *testing.T) {
	m := render(t)
	job := m.job.Spec
	if job.CompletionMode == nil || *job.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job: completionMode = %v, want Indexed (runall shards by JOB_COMPLETION_INDEX)", deref(job.CompletionMode))
	}
	if job.Completions == nil || job.Parallelism == nil || *job.Completions != *job.Parallelism {
		t.Errorf("job: completions %v != parallelism %v: every shard should run at once", deref(job.Completions), deref(job.Parallelism))
	}
	if job.BackoffLimit == nil {
		t.Errorf("job: no backoffLimit")
	}
	if !failsJobOnExit(job.PodFailurePolicy, 2) {
		t.Errorf("job: podFailurePolicy should FailJob on exit code 2 (a task-file error is not worth a retry)")
	}
	checkPodSpec(t, "job", &job.Template.Spec, m.configMap)

	shards := envValue(job.Template.Spec.Containers[0].Env, "RUNALL_SHARDS")
	if job.Completions != nil && shards != strconv.Itoa(int(*job.Completions)) {
		t.Errorf("job: RUNALL_SHARDS = %q, want %d (completions)", shards, *job.Completions)
	}
}

// checkPodSpec asserts what both the Pod and the Job's Pods need.
func checkPodSpec(t *testing.T, what string, spec *corev1.PodSpec, cm *corev1.ConfigMap) {
	t.Helper()
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy = %q, want Never (a finished sweep must not start over)", what, spec.RestartPolicy)
	}
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g <= runallGraceSeconds {
		t.Errorf("%s: terminationGracePeriodSeconds = %v, want more than runall's %ds so the final upload runs",
			what, deref(g), runallGraceSeconds)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(spec.Containers))
	}
	c := spec.Containers[0]
	if q, ok := c.Resources.Limits[gpu]; !ok || q.Value() != 1 {
		t.Errorf("%s: limits[%s] = %v, want 1", what, gpu, q.String())
	}
	if c.Image == "" || c.Image == "runall-catdog" || !strings.Contains(c.Image, ":") {
		t.Errorf("%s: image %q was not set by the kustomization's images:", what, c.Image)
	}
	usesConfigMap := false
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil && from.ConfigMapRef.Name == cm.Name {
			usesConfigMap = true
		}
	}
	if !usesConfigMap {
		t.Errorf("%s: envFrom does not name the generated ConfigMap %q", what, cm.Name)
	}
	for _, e := range c.Env {
		if secretish.MatchString(e.Name) && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("%s: env %s must come from a Secret (valueFrom.secretKeyRef), not inline", what, e.Name)
		}
	}
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) &&
			!slices.ContainsFunc(c.EnvFrom, func(f corev1.EnvFromSource) bool { return f.SecretRef != nil }) {
			t.Errorf("%s: no %s from the Secret", what, name)
		}
	}

	// Every ${VAR} tasks.yml expands must reach the container.
	have := map[string]bool{}
	for k := range cm.Data {
		have[k] = true
	}
	for _, e := range c.Env {
		have[e.Name] = true
	}
	for _, v := range tasksFileVars(t) {
		if !have[v] {
			t.Errorf("%s: tasks.yml uses ${%s}, which neither the ConfigMap nor env sets", what, v)
		}
	}
}

func TestConfigMapHoldsNoSecrets(t *testing.T) {
	m := render(t)
	for k := range m.configMap.Data {
		if secretish.MatchString(k) {
			t.Errorf("configmap: %s belongs in the Secret", k)
		}
	}
}

func TestSecretTemplate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(k8sDir, "secret.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		t.Fatalf("secret.example.yaml: %v", err)
	}
	if s.APIVersion != "v1" || s.Kind != "Secret" || s.Name != "runall-s3" {
		t.Errorf("secret.example.yaml: %s %s %q, want v1 Secret \"runall-s3\"", s.APIVersion, s.Kind, s.Name)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if v, ok := s.StringData[k]; !ok || v != "change-me" {
			t.Errorf("secret.example.yaml: %s = %q, want the placeholder change-me", k, v)
		}
	}
	if len(s.Data) != 0 {
		t.Errorf("secret.example.yaml: has data:, want only placeholder stringData:")
	}
}

func TestEnvListMatchesTasksFile(t *testing.T) {
	f, err := os.Open(filepath.Join(trainDir, "env.list.example"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		set[k] = v
	}
	for _, v := range tasksFileVars(t) {
		if _, ok := set[v]; !ok {
			t.Errorf("env.list.example: tasks.yml uses ${%s}, which env.list.example does not set", v)
		}
	}
	for k, v := range set {
		if secretish.MatchString(k) && v != "change-me" {
			t.Errorf("env.list.example: %s should be the placeholder change-me, not a value", k)
		}
	}
}

// TestStrictDecodingRejectsTypos shows the decoding the other tests rely on catches what
// kubectl apply would reject or, worse, silently drop.
func TestStrictDecodingRejectsTypos(t *testing.T) {
	const good = `
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: i
      env:
        - name: AWS_SECRET_ACCESS_KEY
          valueFrom:
            secretKeyRef: {name: runall-s3, key: AWS_SECRET_ACCESS_KEY}
`
	tests := []struct{ name, from, to string }{
		{"top-level spec field", "restartPolicy:", "restartPolcy:"},
		{"container field", "image: i", "imag: i"},
		{"nested secretKeyRef field", "{name: runall-s3,", "{nme: runall-s3,"},
		{"duplicate field", "image: i", "image: i\n      image: j"},
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(good), &pod); err != nil {
		t.Fatalf("the correct manifest: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(good, tt.from, tt.to, 1)
			if bad == good {
				t.Fatalf("replacement %q not found", tt.from)
			}
			var pod corev1.Pod
			if err := yaml.UnmarshalStrict([]byte(bad), &pod); err == nil {
				t.Errorf("decoded without error:\n%s", bad)
			}
		})
	}
}

// tasksFileVars returns the ${VAR}s examples/train/tasks.yml expands, sorted; comment lines
// do not count.
func tasksFileVars(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(trainDir, "tasks.yml"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	var vars []string
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			vars = append(vars, m[1])
		}
	}
	slices.Sort(vars)
	return slices.Compact(vars)
}

func failsJobOnExit(p *batchv1.PodFailurePolicy, code int32) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Rules {
		if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
			r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn &&
			slices.Contains(r.OnExitCodes.Values, code) {
			return true
		}
	}
	return false
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func deref[T any](p *T) any {
	if p == nil {
		return "unset"
	}
	return *p
}
