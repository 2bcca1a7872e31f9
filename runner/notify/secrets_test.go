package notify

import (
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// TestNotifySecretsSpareTheOrigin: a variable that holds the webhook's scheme and host is an
// address, shown as one; a variable in its path or query, and its headers, are secrets.
func TestNotifySecretsSpareTheOrigin(t *testing.T) {
	p := &plan.Plan{Config: plan.Config{Notify: &plan.Notify{
		URL:     "${HOOK_URL}/hooks/${HOOK_PATH}?key=${HOOK_KEY}",
		Headers: []plan.EnvVar{{Name: "Authorization", Value: "Bearer ${HOOK_TOKEN}"}},
	}}}
	env := []string{"HOOK_URL=http://127.0.0.1:8080", "HOOK_PATH=path-9b1c7e2d", "HOOK_KEY=key-55d0e4a8c3", "HOOK_TOKEN=tok-7f3a9c1e2b"}
	got := Secrets(env, p.Config.Notify)
	for _, secret := range []string{"path-9b1c7e2d", "key-55d0e4a8c3", "tok-7f3a9c1e2b"} {
		if !slices.Contains(got, secret) {
			t.Errorf("%s is not masked: %q", secret, got)
		}
	}
	if slices.Contains(got, "http://127.0.0.1:8080") {
		t.Errorf("the webhook's origin is masked: %q", got)
	}
}
