package checkprint

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// TestWriteHostMemory: check's description names the host needs and the margin.
func TestWriteHostMemory(t *testing.T) {
	p := mustLoadYAML(t, `
config:
  memory-margin: 10%, 64MiB
tasks:
  - cmd: prepare
    memory: 1GiB
  - name: sweep
    memory: auto
    parallel-tasks:
      - cmd: train <replace>
        for-each: [1, 2]
      - cmd: sized
        memory: 450MiB
        gpu-memory: 2GiB
  - parallel-tasks:
      - cmd: eval <replace>
        for-each: [a, b]
        memory: auto
      - cmd: none
`, plan.LoadOptions{})
	var b strings.Builder
	Write(&b, p)
	if d := b.String(); !strings.Contains(d, "memory auto") || !strings.Contains(d, "memory 450 MiB") || !strings.Contains(d, "memory margin 10% (at least 64 MiB)") {
		t.Errorf("check's description leaves out host needs:\n%s", d)
	}
}

// TestWriteObjectives: check's plan lists every objective, and how trials are ranked.
func TestWriteObjectives(t *testing.T) {
	text := "config:\n  objective:\n    - {metric: val_accuracy, mode: max}\n    - {metric: latency_ms, mode: min}\ntasks:\n  - cmd: train\n"
	p := mustLoadYAML(t, text, plan.LoadOptions{})
	var b strings.Builder
	Write(&b, p)
	if !strings.Contains(b.String(), "objectives: max val_accuracy, min latency_ms (trials ranked by Pareto front; the best by val_accuracy)\n") {
		t.Errorf("check's plan does not list the objectives:\n%s", b.String())
	}
}
