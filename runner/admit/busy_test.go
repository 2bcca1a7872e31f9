package admit

import (
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/proc"
)

// utilProbe is a fake probe whose driver reports each process's utilisation.
type utilProbe struct {
	*fakeProbe
	sm map[uint32]uint32 // PID → percent of the time its kernels ran
}

func (p utilProbe) ProcessUtilization(int) ([]gpu.ProcessUtilization, error) {
	var out []gpu.ProcessUtilization
	for pid, sm := range p.sm {
		out = append(out, gpu.ProcessUtilization{PID: pid, SM: sm})
	}
	return out, nil
}

// TestSampleBusy: with Options.Busy, a sample tells each trial's share of its device's
// time, its processes' added up; a process of no trial's counts for none.
func TestSampleBusy(t *testing.T) {
	w := newWorld(32 * gi)
	probe := utilProbe{fakeProbe: w.fakeProbe, sm: map[uint32]uint32{11: 30, 12: 20, 21: 45, 99: 5}}
	w.a = New(Options{Probe: probe, Margin: defaultMargin, Busy: true, Now: func() time.Time { return w.clock },
		Lineage: func(pid int) (proc.Lineage, bool) { l, ok := w.tree[pid]; return l, ok }})
	a, _, _ := place(w.a, mem(1, 6*gi))
	w.start(a, 10, 11, 2*gi, true)
	w.tree[12] = proc.Lineage{PGID: 10}
	w.run(12, 0, gi, true)
	w.tick(time.Second)
	b, why, _ := place(w.a, mem(2, 6*gi))
	if b == nil {
		t.Fatalf("second trial: %s", why)
	}
	w.start(b, 20, 21, 2*gi, true)
	w.run(99, 0, gi, true) // someone else's
	var got []TrialBusy
	w.a.Start(t.Context(), func(s Sample) { got = s.Busy })
	w.a.Stop()
	slices.SortFunc(got, func(x, y TrialBusy) int { return x.ID - y.ID })
	want := []TrialBusy{{ID: 1, Device: 0, Share: 0.5}, {ID: 2, Device: 0, Share: 0.45}}
	if !slices.Equal(got, want) {
		t.Errorf("busy %+v, want %+v", got, want)
	}
	w.a.meter.busy = false
	if busy := w.a.meter.readBusy(w.a.devs); busy != nil {
		t.Errorf("without Options.Busy: %+v", busy)
	}
}

// TestSampleBusyZeroForAnIdleTrial: a trial whose processes are known by their PIDs and ran
// no kernel in the driver's window (not listed) has a share of 0; a trial with no process
// seen yet is left out.
func TestSampleBusyZeroForAnIdleTrial(t *testing.T) {
	w := newWorld(32 * gi)
	probe := utilProbe{fakeProbe: w.fakeProbe, sm: map[uint32]uint32{21: 40}}
	w.a = New(Options{Probe: probe, Margin: defaultMargin, Busy: true, Now: func() time.Time { return w.clock },
		Lineage: func(pid int) (proc.Lineage, bool) { l, ok := w.tree[pid]; return l, ok }})
	idle, _, _ := place(w.a, mem(1, 6*gi))
	w.start(idle, 10, 11, 2*gi, true) // holds memory, computes nothing: not listed
	w.tick(time.Second)
	busy, why, _ := place(w.a, mem(2, 6*gi))
	if busy == nil {
		t.Fatalf("second trial: %s", why)
	}
	w.start(busy, 20, 21, 2*gi, true)
	w.tick(time.Second)
	starting, why, _ := place(w.a, mem(3, 6*gi))
	if starting == nil {
		t.Fatalf("third trial: %s", why)
	}
	w.a.Started(starting, 30) // no process on the GPU yet
	var got []TrialBusy
	w.a.Start(t.Context(), func(s Sample) { got = s.Busy })
	w.a.Stop()
	slices.SortFunc(got, func(x, y TrialBusy) int { return x.ID - y.ID })
	want := []TrialBusy{{ID: 1, Device: 0, Share: 0}, {ID: 2, Device: 0, Share: 0.4}}
	if !slices.Equal(got, want) {
		t.Errorf("busy %+v, want %+v", got, want)
	}
}
