package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/plantest"
)

// TestSimulateCompute: trials packed on a GPU stretch as the simulated GPUs' model says:
// busy ones take about twice as long each plus the switching, light ones no longer, under
// MPS no switching; a trial alone again runs at its own pace.
func TestSimulateCompute(t *testing.T) {
	p := plantest.Load(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t<replace>
        gpu-memory: 12GiB
        cmd: 'true'
        for-each: [1, 2, 3]
`)
	oneGPU := []gpu.Device{{Index: 0, Name: "fake", Total: 32 << 30}}
	tests := []struct {
		name    string
		compute Compute
		want    time.Duration
	}{
		// Two fit at once: two rounds of 10 s, the second alone.
		{"not modelled", Compute{}, 20 * time.Second},
		{"busy: 2.5x for the pair, then one alone", Compute{Busy: 1}, 25*time.Second + 10*time.Second},
		{"light: the pair fits in each other's gaps", Compute{Busy: 0.2}, 20 * time.Second},
		{"busy under MPS: 2x, no switching", Compute{Busy: 1, MPS: []bool{true}}, 20*time.Second + 10*time.Second},
	}
	for _, tt := range tests {
		pred, err := Predict(p, Options{Devices: oneGPU, Guess: 10 * time.Second, Compute: tt.compute})
		if err != nil {
			t.Fatal(err)
		}
		if d := pred.Makespan - tt.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: makespan %v, want %v", tt.name, pred.Makespan, tt.want)
		}
		if !strings.Contains(strings.Join(pred.Notes, "\n"), "compute") {
			t.Errorf("%s: notes %q say nothing of compute", tt.name, pred.Notes)
		}
	}
}
