package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/plan"
)

func simulatePlan(t *testing.T, content string) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var twoGPUs = []gpu.Device{{Index: 0, Name: "fake", Total: 32 << 30}, {Index: 1, Name: "fake", Total: 32 << 30}}

// The prediction never puts more on a device than it holds after the margin, runs the setup
// step first, and ends when its last trial ends.
func TestSimulateRespectsMemory(t *testing.T) {
	p := simulatePlan(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: setup
    cmd: 'true'
  - name: sweep
    parallel-tasks:
      - name: t<replace>
        gpu-memory: 10GiB
        cmd: 'true'
        for-each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
`)
	pred, err := Simulate(p, SimulateOptions{Devices: twoGPUs, Guess: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(pred.Slots) != 11 || pred.Slots[0].Task.Name != "setup" || pred.Slots[0].End != time.Second {
		t.Fatalf("slots %+v, want setup first (1 s), then 10 trials", pred.Slots)
	}
	usable := uint64(32<<30) - plan.DefaultMargin.For(32<<30)
	var last time.Duration
	for _, s := range pred.Slots[1:] {
		if s.Start < time.Second || len(s.Devices) != 1 || !s.Guessed {
			t.Errorf("%s: start %v on %v, guessed %v; want after the setup, on one device, guessed", s.Task.Name, s.Start, s.Devices, s.Guessed)
		}
		var on uint64 // what runs beside s on its device when it starts, s included
		for _, o := range pred.Slots[1:] {
			if o.Devices[0] == s.Devices[0] && o.Start <= s.Start && o.End > s.Start {
				on += o.Need
			}
		}
		if on > usable {
			t.Errorf("%s starts where %d GiB are then needed, more than the %d usable", s.Task.Name, on>>30, usable>>30)
		}
		last = max(last, s.End)
	}
	// Three 10 GiB trials fit on a device after the margin: 10 trials on 2 devices take
	// two rounds of 1 s.
	if pred.Makespan != last || last != 3*time.Second {
		t.Errorf("makespan %v, last end %v; want 3s (setup, then two rounds)", pred.Makespan, last)
	}
	if pred.Peak[0] != 30<<30 || pred.Peak[1] != 30<<30 {
		t.Errorf("peaks %v, want 30 GiB on each", pred.Peak)
	}
}

// Without a recorded duration or a guess, the prediction says what to do.
func TestSimulateNeedsDurations(t *testing.T) {
	p := simulatePlan(t, "tasks:\n  - name: train\n    cmd: 'true'\n")
	_, err := Simulate(p, SimulateOptions{Devices: twoGPUs})
	if err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("err %v, want one that names --duration", err)
	}
}

// A trial no device can hold is an error, not a prediction that never ends.
func TestSimulateNeverFits(t *testing.T) {
	p := simulatePlan(t, "tasks:\n  - name: s\n    parallel-tasks:\n      - {name: big, cmd: 'true', gpu-memory: 40GiB}\n")
	if _, err := Simulate(p, SimulateOptions{Devices: twoGPUs, Guess: time.Second}); err == nil {
		t.Error("a 40 GiB trial on 32 GiB devices was predicted to run")
	}
}

// TestSimulatePlacesAsTheAdmitter: check --simulate and the admitter place one workload
// the same way: every trial the simulation starts at once goes on the same device when the
// admitter places the trials in the same order, and the ones it holds back wait there too.
func TestSimulatePlacesAsTheAdmitter(t *testing.T) {
	p := simulatePlan(t, `
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
	pred, err := Simulate(p, SimulateOptions{Devices: devices, Guess: time.Second})
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
		pl, _, err := a.Place(gpuRequest(trial))
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

// A trial's memory given back a while after its end delays the trials waiting for it, not
// the trials that fit already, nor the block's end.
func TestSimulateReleaseLag(t *testing.T) {
	p := simulatePlan(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t<replace>
        gpu-memory: 10GiB
        cmd: 'true'
        for-each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
`)
	pred, err := Simulate(p, SimulateOptions{Devices: twoGPUs, Guess: time.Second, ReleaseLag: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Three fit on each device: six start at 0, end at 1 s; their memory is back at 1.3 s,
	// when the last four start, to end at 2.3 s.
	starts := map[time.Duration]int{}
	for _, s := range pred.Slots {
		starts[s.Start]++
	}
	if starts[0] != 6 || starts[1300*time.Millisecond] != 4 || pred.Makespan != 2300*time.Millisecond {
		t.Errorf("starts %v, makespan %v; want 6 at 0 and 4 at 1.3 s, ending at 2.3 s", starts, pred.Makespan)
	}
}
