package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/plan"
)

var twoGPUs = []gpu.Device{{Index: 0, Name: "fake", Total: 32 << 30}, {Index: 1, Name: "fake", Total: 32 << 30}}

// The prediction never puts more on a device than it holds after the margin, runs the setup
// step first, and ends when its last trial ends.
func TestSimulateRespectsMemory(t *testing.T) {
	p := plantest.Load(t, `
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
	pred, err := Predict(p, Options{Devices: twoGPUs, Guess: time.Second})
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
	p := plantest.Load(t, "tasks:\n  - name: train\n    cmd: 'true'\n")
	_, err := Predict(p, Options{Devices: twoGPUs})
	if err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("err %v, want one that names --duration", err)
	}
}

// A trial no device can hold is an error, not a prediction that never ends.
func TestSimulateNeverFits(t *testing.T) {
	p := plantest.Load(t, "tasks:\n  - name: s\n    parallel-tasks:\n      - {name: big, cmd: 'true', gpu-memory: 40GiB}\n")
	if _, err := Predict(p, Options{Devices: twoGPUs, Guess: time.Second}); err == nil {
		t.Error("a 40 GiB trial on 32 GiB devices was predicted to run")
	}
}

// A trial's memory given back a while after its end delays the trials waiting for it, not
// the trials that fit already, nor the block's end.
func TestSimulateReleaseLag(t *testing.T) {
	p := plantest.Load(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t<replace>
        gpu-memory: 10GiB
        cmd: 'true'
        for-each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
`)
	pred, err := Predict(p, Options{Devices: twoGPUs, Guess: time.Second, ReleaseLag: 300 * time.Millisecond})
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
