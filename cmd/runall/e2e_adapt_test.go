package main_test

import (
	"strings"
	"testing"
)

// Sweeps that adapt, as a user sees them: metrics read from the output as scripts print
// them, unnamed trials named by their flags, sampled search spaces, early stopping and a
// sampler of the user's own.

// TestCheckSimulateAdaptive: check --simulate lists the sampled trials and asha's budget per
// rung; two checks of the same file print the same trials.
func TestCheckSimulateAdaptive(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	args := []string{"check", "--simulate", "--fake-gpus", "2x16GiB", "--duration", "1m", testdata("adapt/sample-asha.yml")}
	r := e.run(args...)
	r.wantCode(t, 0)
	for _, want := range []string{
		"early stop: asha on val_accuracy (higher is better), grace 1, reduction 3, max 27; rungs step 1: at most 9, step 3: at most 3, step 9: at most 1",
		"digits [lr=",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check --simulate does not say %q\n%v", want, r)
		}
	}
	if n := strings.Count(r.stdout, "\n  digits [lr="); n != 9 {
		t.Errorf("%d sampled trials listed, want 9\n%v", n, r)
	}
	if again := e.run(args...); again.stdout != r.stdout {
		t.Errorf("two checks of one file differ:\n%s\n---\n%s", r.stdout, again.stdout)
	}
}
