package admit

import (
	"context"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/proc"
)

// meter is the admitter's measuring part: the probe and the clock, the last measurement of
// the devices, whose process IDs the driver reports, the sampling loop's lifetime and the
// channel that tells waiting trials a measurement or a release came. It decides nothing;
// the Admitter's lock guards it.
type meter struct {
	probe   gpu.Probe
	lineage func(pid int) (proc.Lineage, bool) // a process's group and ancestors
	now     func() time.Time

	snap    []gpu.Device // the last measurement
	snapAt  time.Time
	snapErr error
	pids    PIDs // whose PIDs the driver reports

	cancel  context.CancelFunc // ends the sampling loop Start began
	done    chan struct{}      // closed when that loop has ended
	changed chan struct{}      // closed at the next sample or release: see Changed
}

// measureLocked reads the devices into the last measurement; on an error it keeps the one
// before and remembers why.
func (m *meter) measureLocked() ([]gpu.Device, bool) {
	devs, err := m.probe.Devices()
	m.snapErr = err
	if err != nil {
		return nil, false
	}
	m.snap, m.snapAt = devs, m.now()
	return devs, true
}

// changedLocked wakes whoever waits on Changed.
func (m *meter) changedLocked() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

// perTrialLocked reports whether trials' memory is known from their own processes.
func (m *meter) perTrialLocked() bool { return m.pids == PIDsHere || m.pids == PIDsElsewhere }

// provisional is what a learning trial reserves on dev until its need is known: a quarter
// of the device. It grows past that at its own risk: an out-of-memory error requeues it
// with its measured need.
func (m *meter) provisional(dev int) uint64 {
	const step = 64 << 20
	return m.snap[dev].Total / 4 / step * step
}

// stop ends the sampling loop, if one runs, and waits for it.
func (m *meter) stop() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
}
