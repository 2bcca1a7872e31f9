package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/plantest"
)

// TestSimulateHostMemory: trials with memory: are packed into the container's limit as well
// as onto GPUs; one that asks for more than the limit is an error before any run.
func TestSimulateHostMemory(t *testing.T) {
	p := plantest.Load(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    memory: 3GiB
    parallel-tasks:
      - name: t<replace>
        gpu-memory: 4GiB
        cmd: 'true'
        for-each: [1, 2, 3, 4, 5, 6]
      - name: eval
        memory: 1GiB
        cmd: 'true'
`)
	// 11 GiB less the 5% margin: three trials of 3 GiB and eval's 1 GiB at once, not four.
	pred, err := Predict(p, Options{Devices: twoGPUs, Guess: time.Second, HostLimit: 11 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pred.Slots {
		var held uint64
		for _, o := range pred.Slots {
			if o.Start <= s.Start && o.End > s.Start {
				held += o.HostNeed
			}
		}
		if held > 11<<30-563<<20 {
			t.Errorf("at %v, %d MiB of host memory held: more than the limit less the margin", s.Start, held>>20)
		}
	}
	if pred.HostPeak != 10<<30 || pred.HostLimit != 11<<30 {
		t.Errorf("host peak %d MiB of %d, want 10240 of 11264 (three trials and eval)", pred.HostPeak>>20, pred.HostLimit>>20)
	}
	if pred.Makespan != 2*time.Second {
		t.Errorf("makespan %v, want 2s: three trials at a time, host memory bounds it before the GPUs do", pred.Makespan)
	}

	// Without a limit to plan for, host needs are not modelled: all eight fit on the GPUs.
	pred, err = Predict(p, Options{Devices: twoGPUs, Guess: time.Second})
	if err != nil || pred.Makespan != time.Second || pred.HostLimit != 0 {
		t.Errorf("without a limit: makespan %v (%v), want 1s", pred.Makespan, err)
	}

	_, err = Predict(p, Options{Devices: twoGPUs, Guess: time.Second, HostLimit: 2 << 30})
	if err == nil || !strings.Contains(err.Error(), `"t1" needs more host memory than the container's limit: needs 3.0 GiB, the limit is 2.0 GiB`) {
		t.Errorf("a need beyond the limit: %v", err)
	}
}
