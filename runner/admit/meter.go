package admit

import (
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/needs"
	"github.com/runall/runall/runner/proc"
)

// meter is the admitter's measuring part: the probe and the clock, the last measurement of
// the devices, whose PIDs the driver reports (and so how processes are tied to trials,
// attrib.go), the sampling loop's lifetime and the channel that tells waiting trials a
// measurement or a release came. It decides no placement; the Admitter's lock guards it.
type meter struct {
	probe   gpu.Probe
	lineage func(pid int) (proc.Lineage, bool) // a process's group and ancestors
	now     func() time.Time

	snap    []gpu.Device // the last measurement
	snapAt  time.Time
	snapErr error
	pids    PIDs // whose PIDs the driver reports
	busy    bool // read each trial's share of its devices' time (Options.Busy)

	loop    needs.Loop    // the sampling loop Start began
	changed needs.Changed // woken at the next sample or release: see Changed
}

// measure reads the devices into the last measurement; on an error it keeps the one
// before and remembers why.
func (m *meter) measure() ([]gpu.Device, bool) {
	devs, err := m.probe.Devices()
	m.snapErr = err
	if err != nil {
		return nil, false
	}
	m.snap, m.snapAt = devs, m.now()
	return devs, true
}

// waiting is the channel the next measurement or release closes.
func (m *meter) waiting() <-chan struct{} { return m.changed.Chan() }

// wake wakes whoever waits on Changed.
func (m *meter) wake() { m.changed.Wake() }

// perTrial reports whether trials' memory is known from their own processes.
func (m *meter) perTrial() bool { return m.pids == PIDsHere || m.pids == PIDsElsewhere }

// exact reports whether p's memory is known from its own processes.
func (m *meter) exact(p *Placement) bool { return m.perTrial() && !p.tie.ambiguous }

// provisional is what a learning trial reserves on dev until its need is known: a quarter
// of the device. It grows past that at its own risk: an out-of-memory error requeues it
// with its measured need.
func (m *meter) provisional(dev int) uint64 {
	const step = 64 << 20
	return m.snap[dev].Total / 4 / step * step
}

// stop ends the sampling loop, if one runs, and waits for it.
func (m *meter) stop() { m.loop.Stop() }

// processesRead is what the driver listed on one device.
type processesRead struct {
	procs []gpu.Process
	err   error
}

// readProcesses lists the processes on the devices where runall's trials run. They are
// read before the devices' use: a moment apart, a trial that grows in between then shows in
// the use and not yet in its processes, which errs on the safe side (its reservation holds,
// the baseline does not fall by it); read after, its growth would count twice, as memory it
// has yet to allocate and as memory it has.
func (m *meter) readProcesses(devs *devices) map[int]processesRead {
	out := map[int]processesRead{}
	for i := range devs.list {
		if len(devs.list[i].trials) > 0 {
			procs, err := m.probe.Processes(i)
			out[i] = processesRead{procs, err}
		}
	}
	return out
}
