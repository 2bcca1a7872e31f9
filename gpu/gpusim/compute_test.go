package gpusim

import (
	"math"
	"testing"
)

func TestStretch(t *testing.T) {
	busy := func(b ...float64) []Load {
		out := make([]Load, len(b))
		for i, x := range b {
			out[i] = Load{Busy: x}
		}
		return out
	}
	tests := []struct {
		name  string
		loads []Load
		mps   bool
		want  float64
	}{
		{"alone, busy", busy(1), false, 1},
		{"alone, light", busy(0.2), false, 1},
		{"two busy: twice as long each, plus the switching", busy(1, 1), false, 2 * (1 + SwitchCost)},
		{"two light fit in each other's gaps", busy(0.2, 0.2), false, 1},
		{"four light: 0.8 of demand, 1.6 with the switching", busy(0.2, 0.2, 0.2, 0.2), false, 0.8 * (1 + 3*SwitchCost)},
		{"a busy one and a light one", busy(1, 0.2), false, 1.2 * (1 + SwitchCost)},
		{"memory held, nothing computed, costs nothing", busy(1, 0, 0), false, 1},
		{"MPS: two busy filling the SMs share them, no switching", busy(1, 1), true, 2},
		{"MPS: kernels of half the SMs overlap", []Load{{1, 0.5}, {1, 0.5}}, true, 1},
		{"MPS: up to the device's capacity", []Load{{1, 0.5}, {1, 0.5}, {1, 0.5}}, true, 1.5},
		{"time-slicing ignores SM shares", []Load{{1, 0.5}, {1, 0.5}}, false, 2 * (1 + SwitchCost)},
		{"nothing", nil, false, 1},
	}
	for _, tt := range tests {
		if got := Stretch(tt.loads, tt.mps); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Stretch(%v, mps %v) = %v, want %v", tt.name, tt.loads, tt.mps, got, tt.want)
		}
	}
}

// TestStretchThroughput: sharing raises a GPU's throughput (the sum of each process's rate
// shared over its rate alone) for light processes, and lowers it for busy ones.
func TestStretchThroughput(t *testing.T) {
	throughput := func(n int, busy float64) float64 {
		loads := make([]Load, n)
		for i := range loads {
			loads[i] = Load{Busy: busy}
		}
		return float64(n) / Stretch(loads, false)
	}
	if got := throughput(2, 1); got >= 1 {
		t.Errorf("two busy processes: throughput %.2f, want below 1 (sharing loses)", got)
	}
	if got := throughput(4, 0.2); got < 2 {
		t.Errorf("four light processes: throughput %.2f, want at least 2", got)
	}
	// The H100 figure, a sanity check and not a fit: 12 trials stalling 25 ms a
	// step ran 3.7x faster packed than one at a time. Light trials gain several times over.
	if got := throughput(12, 0.07); got < 3 || got > 5 {
		t.Errorf("twelve trials of busy 0.07: throughput %.2f, want 3-5", got)
	}
}

func TestUtilization(t *testing.T) {
	dev, procs := Utilization([]Load{{Busy: 1}, {Busy: 1}}, false)
	if want := percent(1 / (2 * (1 + SwitchCost))); procs[0] != want || procs[1] != want {
		t.Errorf("two busy: processes %v%%, want %d%% each", procs, want)
	}
	if want := percent(1 / (1 + SwitchCost)); dev != want {
		t.Errorf("two busy: device %d%%, want %d%% (the rest lost to switching)", dev, want)
	}
	dev, procs = Utilization([]Load{{Busy: 0.2}, {Busy: 0.3}, {}}, false)
	if dev != 50 || procs[0] != 20 || procs[1] != 30 || procs[2] != 0 {
		t.Errorf("light: device %d%%, processes %v%%, want 50%% and [20 30 0]", dev, procs)
	}
	dev, procs = Utilization([]Load{{1, 0.5}, {1, 0.5}}, true)
	if dev != 100 || procs[0] != 100 || procs[1] != 100 {
		t.Errorf("MPS, half the SMs each: device %d%%, processes %v%%, want 100%% all", dev, procs)
	}
}
