package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/gpures"
	"github.com/runall/runall/runner/simulate"
)

// TestSimulatePlacesAsTheAdmitter: check --simulate and the admitter place one workload
// the same way: every trial the simulation starts at once goes on the same device when the
// admitter places the trials in the same order, and the ones it holds back wait there too.
func TestSimulatePlacesAsTheAdmitter(t *testing.T) {
	p := plantest.Load(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    order: file
    parallel-tasks:
      - {name: a, gpu-memory: 10GiB, cmd: 'true'}
      - {name: b, gpu-memory: 12GiB, cmd: 'true'}
      - {name: c, gpu-memory: 6GiB, cmd: 'true'}
      - {name: d, gpu-memory: 8GiB, cmd: 'true'}
      - {name: e, gpu-memory: 3GiB, cmd: 'true'}
      - {name: f, gpu-memory: 14GiB, cmd: 'true'}
      - {name: g, gpu-memory: 2GiB, cmd: 'true'}
`)
	sizes := []uint64{32 << 30, 24 << 30}
	devices := []gpu.Device{{Index: 0, Name: "fake", Total: sizes[0]}, {Index: 1, Name: "fake", Total: sizes[1]}}
	pred, err := simulate.Predict(p, simulate.Options{Devices: devices, Guess: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Config.GPUMemoryMargin
	// The admitter's clock moves on a minute at each look, so that no trial is still being
	// tied to its processes when the next is placed: the simulation models no launch.
	clock := time.Now()
	now := func() time.Time { clock = clock.Add(time.Minute); return clock }
	a := admit.New(admit.Options{Probe: fakeGPUs(t, sizes...), Margin: admit.Margin{Bytes: m.Bytes, Fraction: m.Fraction}, Now: now})
	simulated := map[string][]int{}
	for _, s := range pred.Slots {
		if s.Start == 0 {
			simulated[s.Task.Name] = s.Devices
		}
	}
	for _, trial := range p.Tasks[0].Parallel {
		pl, _, err := a.Place(gpures.Request(trial))
		if err != nil {
			t.Fatal(err)
		}
		want, started := simulated[trial.Name]
		switch {
		case pl == nil && started:
			t.Errorf("%s: the simulation starts it on %v, the admitter holds it back", trial.Name, want)
		case pl != nil && !started:
			t.Errorf("%s: the admitter places it on %v, the simulation holds it back", trial.Name, pl.Devices)
		case pl != nil && !slices.Equal(pl.Devices, want):
			t.Errorf("%s: the admitter places it on %v, the simulation on %v", trial.Name, pl.Devices, want)
		}
	}
	if len(simulated) < 4 || len(simulated) == len(p.Tasks[0].Parallel) {
		t.Errorf("the simulation started %d of %d at once: the workload should fill the devices and hold some back", len(simulated), len(p.Tasks[0].Parallel))
	}
}
