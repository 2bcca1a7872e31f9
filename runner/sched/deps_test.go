package sched

import (
	"os/exec"
	"strings"
	"testing"
)

// The scheduler knows trials, sources and resources only as its own types: it imports no
// resource (the GPU library, the claims' S3 client) and no process.
func TestSchedulerImportsNoResource(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/aws/", "github.com/NVIDIA/go-nvml", "github.com/runall/runall/runner/proc",
			"github.com/runall/runall/runner/admit", "github.com/runall/runall/runner/hostadmit", "github.com/runall/runall/claims"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("runner/sched depends on %s", dep)
			}
		}
	}
}
