package k8stest

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// TestProgressOverlay: examples/k8s/progress/claims is the claims Job with RUNALL_POD_PROGRESS
// on, its own Pod's name (POD_NAME), a token mounted for a ServiceAccount whose Role may
// patch Pods, and nothing else changed; the base claims Job mounts no token.
func TestProgressOverlay(t *testing.T) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(k8sDir, "progress", "claims"))
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	var sa corev1.ServiceAccount
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	for _, r := range res.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		dst := map[string]any{"Job": &job, "ServiceAccount": &sa, "Role": &role, "RoleBinding": &binding, "ConfigMap": &corev1.ConfigMap{}}[r.GetKind()]
		if dst == nil {
			t.Fatalf("progress/claims: unexpected %s", r.GetKind())
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("progress/claims: %s: %v", r.GetKind(), err)
		}
	}
	spec := job.Spec.Template.Spec
	if spec.ServiceAccountName != sa.Name || sa.Name == "" {
		t.Errorf("the Job runs as ServiceAccount %q, the overlay makes %q", spec.ServiceAccountName, sa.Name)
	}
	if spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
		t.Errorf("no token mounted: runall cannot patch its Pod")
	}
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "pods") && slices.Contains(r.Verbs, "patch")
	}) {
		t.Errorf("the Role does not grant patch on pods: %+v", role.Rules)
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != sa.Name {
		t.Errorf("the RoleBinding binds %+v to %+v, want Role %q to ServiceAccount %q", binding.RoleRef, binding.Subjects, role.Name, sa.Name)
	}
	c := spec.Containers[0]
	if v := envValue(c.Env, "RUNALL_POD_PROGRESS"); v != "1" {
		t.Errorf("RUNALL_POD_PROGRESS = %q, want 1", v)
	}
	if !envFromField(c.Env, "POD_NAME", "metadata.name") {
		t.Errorf("POD_NAME should come from metadata.name: the Pod runall patches")
	}
	orig, _ := renderClaims(t)
	if a := orig.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("the base claims Job mounts a token: runall talks to no API server unless the overlay asks")
	}
	same := job.DeepCopy()
	ps := &same.Spec.Template.Spec
	ps.ServiceAccountName, ps.AutomountServiceAccountToken = orig.Spec.Template.Spec.ServiceAccountName, orig.Spec.Template.Spec.AutomountServiceAccountToken
	ps.Containers[0].Env = slices.DeleteFunc(ps.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "RUNALL_POD_PROGRESS" || e.Name == "POD_NAME" })
	if !reflect.DeepEqual(same, orig) {
		t.Errorf("progress/claims changes more of the Job than its ServiceAccount, token and two variables")
	}
}
