// Package k8stest checks the Kubernetes manifests of examples/k8s offline: it renders the
// Pod's and the Job's overlays in-process (the kustomize library kubectl embeds), decodes every document
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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	k8sDir   = ".."             // examples/k8s
	trainDir = "../../train"    // examples/train
	gpu      = "nvidia.com/gpu" // the NVIDIA device plugin's resource
	// uploadRoom is the least time a Pod's grace period must leave, after runall's own
	// --grace, for the final upload.
	uploadRoom = 60 * time.Second
	// runallDefaultGrace is runall's --grace when the args do not set it.
	runallDefaultGrace = 20 * time.Second
)

// The overlays: one apply of each starts one workload.
const (
	podOverlay = "pod"
	jobOverlay = "job"
)

// secretish matches environment variable names whose values must come from a Secret.
var secretish = regexp.MustCompile(`(?i)(SECRET|ACCESS_KEY|TOKEN|PASSWORD)`)

// manifests is a rendered kustomization, decoded.
type manifests struct {
	pod       *corev1.Pod
	job       *batchv1.Job
	configMap *corev1.ConfigMap
}

// render runs the overlay examples/k8s/<dir> from disk and strictly decodes each resource.
func render(t *testing.T, dir string) manifests {
	t.Helper()
	return renderFS(t, filesys.MakeFsOnDisk(), filepath.Join(k8sDir, dir))
}

// renderFS runs the kustomization at dir in fsys and strictly decodes each resource by kind.
func renderFS(t *testing.T, fsys filesys.FileSystem, dir string) manifests {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(fsys, dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
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
			t.Fatalf("%s: unexpected resource %s %s %q (one workload and its ConfigMap)", dir, api, kind, r.GetName())
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("%s: %s %q: %v", dir, kind, r.GetName(), err)
		}
	}
	if m.configMap == nil {
		t.Fatalf("%s: no ConfigMap", dir)
	}
	return m
}

// TestOneApplyOneWorkload: each overlay starts one workload, and examples/k8s itself none
// (kubectl apply -k examples/k8s once started the Pod and the Job: the same sweep twice).
func TestOneApplyOneWorkload(t *testing.T) {
	if m := render(t, podOverlay); m.pod == nil || m.job != nil {
		t.Errorf("%s: pod %v, job %v; want the Pod alone", podOverlay, m.pod != nil, m.job != nil)
	}
	if m := render(t, jobOverlay); m.job == nil || m.pod != nil {
		t.Errorf("%s: pod %v, job %v; want the Job alone", jobOverlay, m.pod != nil, m.job != nil)
	}
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(k8sDir, name)); err == nil {
			t.Errorf("examples/k8s/%s: a kustomization above the overlays applies them all at once", name)
		}
	}
}

func TestPod(t *testing.T) {
	m := render(t, podOverlay)
	checkPodSpec(t, "pod", &m.pod.Spec, m.configMap)
	if !envFromField(m.pod.Spec.Containers[0].Env, "RUN_ID", "metadata.uid") {
		t.Errorf("pod: RUN_ID should come from metadata.uid: a new run for each Pod")
	}
}

func TestJob(t *testing.T) {
	m := render(t, jobOverlay)
	job := m.job.Spec
	if job.CompletionMode == nil || *job.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job: completionMode = %v, want Indexed (runall shards by JOB_COMPLETION_INDEX)", deref(job.CompletionMode))
	}
	if job.Completions == nil || job.Parallelism == nil || *job.Completions != *job.Parallelism {
		t.Errorf("job: completions %v != parallelism %v: every shard should run at once", deref(job.Completions), deref(job.Parallelism))
	}
	if job.BackoffLimitPerIndex == nil || *job.BackoffLimitPerIndex < 1 {
		t.Errorf("job: backoffLimitPerIndex = %v, want a few retries per shard", deref(job.BackoffLimitPerIndex))
	}
	if job.PodReplacementPolicy == nil || *job.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("job: podReplacementPolicy = %v, want Failed: a replacement Pod must wait for the one it replaces to end (its grace period, its upload)", deref(job.PodReplacementPolicy))
	}
	if !failsJobOnExit(job.PodFailurePolicy, 2) {
		t.Errorf("job: podFailurePolicy should FailJob on exit code 2 (a task-file error is not worth a retry)")
	}
	checkPodSpec(t, "job", &job.Template.Spec, m.configMap)
	env := job.Template.Spec.Containers[0].Env
	if !envFromField(env, "RUN_ID", "metadata.labels['batch.kubernetes.io/controller-uid']") &&
		!envFromField(env, "RUN_ID", "metadata.labels['controller-uid']") {
		t.Errorf("job: RUN_ID should come from the Job controller's uid label: a new run for each Job")
	}
	shards := envValue(env, "RUNALL_SHARDS")
	if job.Completions != nil && shards != strconv.Itoa(int(*job.Completions)) {
		t.Errorf("job: RUNALL_SHARDS = %q, want %d (completions)", shards, *job.Completions)
	}
}

// TestJobShardCountIsDerived: changing completions alone changes parallelism and
// RUNALL_SHARDS with it; nobody copies the count by hand.
func TestJobShardCountIsDerived(t *testing.T) {
	fsys := diskCopy(t)
	jobFile := filepath.Join(jobOverlay, "job.yaml")
	b, err := fsys.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  completions: \d+`)
	if !re.Match(b) {
		t.Fatalf("%s: no completions: line to change", jobFile)
	}
	if err := fsys.WriteFile(jobFile, re.ReplaceAll(b, []byte("  completions: 7"))); err != nil {
		t.Fatal(err)
	}
	job := renderFS(t, fsys, jobOverlay).job.Spec
	if deref(job.Completions) != int32(7) || deref(job.Parallelism) != int32(7) ||
		envValue(job.Template.Spec.Containers[0].Env, "RUNALL_SHARDS") != "7" {
		t.Errorf("completions 7: parallelism %v, RUNALL_SHARDS %q; want both to follow",
			deref(job.Parallelism), envValue(job.Template.Spec.Containers[0].Env, "RUNALL_SHARDS"))
	}
}

// TestResumeIsAChoice: by default each workload has a run id of its own; the resume patch,
// once enabled, sets the earlier run's id instead.
func TestResumeIsAChoice(t *testing.T) {
	for _, overlay := range []string{podOverlay, jobOverlay} {
		t.Run(overlay, func(t *testing.T) {
			fsys := diskCopy(t)
			file := filepath.Join(overlay, "kustomization.yaml")
			b, err := fsys.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			on := strings.Replace(string(b), "# patches:\n#   - path: resume.yaml", "patches:\n  - path: resume.yaml", 1)
			if on == string(b) {
				t.Fatalf("%s: no commented-out resume patch to enable", file)
			}
			if err := fsys.WriteFile(file, []byte(on)); err != nil {
				t.Fatal(err)
			}
			m := renderFS(t, fsys, overlay)
			var spec corev1.PodSpec
			switch {
			case m.pod != nil:
				spec = m.pod.Spec
			case m.job != nil:
				spec = m.job.Spec.Template.Spec
			default:
				t.Fatalf("%s: no workload", overlay)
			}
			if !slices.ContainsFunc(spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "RUN_ID" }) {
				t.Fatalf("resume: no RUN_ID")
			}
			for _, e := range spec.Containers[0].Env {
				if e.Name == "RUN_ID" && (e.Value == "" || e.ValueFrom != nil) {
					t.Errorf("resume: RUN_ID %+v, want the earlier run's id alone", e)
				}
			}
		})
	}
}

// checkPodSpec asserts what both the Pod and the Job's Pods need.
func checkPodSpec(t *testing.T, what string, spec *corev1.PodSpec, cm *corev1.ConfigMap) {
	t.Helper()
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy = %q, want Never (a finished sweep must not start over)", what, spec.RestartPolicy)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(spec.Containers))
	}
	c := spec.Containers[0]
	grace := runallGrace(t, what, c.Args)
	if g := spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < grace+uploadRoom {
		t.Errorf("%s: terminationGracePeriodSeconds = %v, want at least runall's --grace (%v) plus %v for the final upload",
			what, deref(g), grace, uploadRoom)
	}
	checkSecurity(t, what, spec)
	if q, ok := c.Resources.Limits[gpu]; !ok || q.Value() != 1 {
		t.Errorf("%s: limits[%s] = %v, want 1", what, gpu, q.String())
	}
	if c.Image == "" || c.Image == "runall-catdog" || !strings.Contains(c.Image, ":") {
		t.Errorf("%s: image %q was not set by the kustomization's images:", what, c.Image)
	}
	checkEnv(t, what, c, cm)
}

// checkSecurity: non-root as the image's own user, no privilege escalation, no
// capabilities, no service-account token, and every emptyDir bounded.
func checkSecurity(t *testing.T, what string, spec *corev1.PodSpec) {
	t.Helper()
	if a := spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("%s: automountServiceAccountToken = %v, want false (runall never calls the API server)", what, deref(a))
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: securityContext.runAsNonRoot should be true", what)
	}
	if uid := imageUser(t); psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != uid {
		t.Errorf("%s: securityContext.runAsUser should be the image's USER %d", what, uid)
	}
	csc := spec.Containers[0].SecurityContext
	if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
		t.Errorf("%s: container securityContext.allowPrivilegeEscalation should be false", what)
	}
	if csc == nil || csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") || len(csc.Capabilities.Add) > 0 {
		t.Errorf("%s: container securityContext.capabilities should drop ALL and add none", what)
	}
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
			t.Errorf("%s: emptyDir %q has no sizeLimit: it could fill the node's disk", what, v.Name)
		}
	}
}

// checkEnv: the ConfigMap, secrets only by reference, and every ${VAR} tasks.yml expands.
func checkEnv(t *testing.T, what string, c corev1.Container, cm *corev1.ConfigMap) {
	t.Helper()
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

// runallGrace is the --grace the container's args give runall, or its default.
func runallGrace(t *testing.T, what string, args []string) time.Duration {
	t.Helper()
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--grace=")
		if (a == "--grace" || a == "-grace") && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s: --grace %q: %v", what, v, err)
			}
			return d
		}
	}
	return runallDefaultGrace
}

// imageUser is the numeric USER the example image ends with (examples/train/Dockerfile).
func imageUser(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(trainDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var user string
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "USER" {
			user, _, _ = strings.Cut(f[1], ":")
		}
	}
	uid, err := strconv.ParseInt(user, 10, 64)
	if err != nil || uid == 0 {
		t.Fatalf("examples/train/Dockerfile: USER %q, want a numeric non-root uid (runAsNonRoot checks numbers)", user)
	}
	return uid
}

// diskCopy is an in-memory copy of examples/k8s (without the tests), to render variants.
func diskCopy(t *testing.T) filesys.FileSystem {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	err := filepath.WalkDir(k8sDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "test" {
				return filepath.SkipDir
			}
			return err
		}
		rel, err := filepath.Rel(k8sDir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := fsys.MkdirAll(filepath.Dir(rel)); err != nil {
			return err
		}
		return fsys.WriteFile(rel, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

func envFromField(env []corev1.EnvVar, name, fieldPath string) bool {
	return slices.ContainsFunc(env, func(e corev1.EnvVar) bool {
		return e.Name == name && e.Value == "" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == fieldPath
	})
}

func TestConfigMapHoldsNoSecrets(t *testing.T) {
	m := render(t, podOverlay) // both overlays share the Component's ConfigMap
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
