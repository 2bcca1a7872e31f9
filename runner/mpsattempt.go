package runner

import (
	"fmt"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/runner/admit"
)

// mpsAttempt is a command's side of its GPU's MPS server: what a failed attempt means when
// that server went down. Every client of a server that died or met a fatal fault goes with
// it: the trial whose fault it was failed (its rule of retries decides), the others were only
// bystanders, and go back to the line with the room they had, not counted as failures.
type mpsAttempt struct {
	iso   *isolation // nil without MPS
	pgid  int        // the current attempt's process group
	fault *mps.Fault // what took its server down, once its end was looked at
}

// check looks, as the attempt ends, at whether its server went down; the fault, or nil.
func (m *mpsAttempt) check(p *admit.Placement) *mps.Fault {
	if m.iso == nil || p == nil {
		return nil
	}
	m.fault = m.iso.check(p.Devices)
	return m.fault
}

// culprit reports whether the fault was this attempt's own: the server's log named one of
// its processes.
func (m *mpsAttempt) culprit() bool {
	return m.fault != nil && m.fault.PGID != 0 && m.fault.PGID == m.pgid
}

// bystanderOf reports whether a fault on its server, not its own, took the attempt down.
func (m *mpsAttempt) bystanderOf() bool { return m.fault != nil && !m.culprit() }

// note is what a failure reason adds of the fault: that it was this attempt's.
func (m *mpsAttempt) note() string {
	if m.bystanderOf() {
		// Requeued as often as a bystander may be (maxBystander), or the run stops.
		return fmt.Sprintf("; GPU%d's MPS server went down (%s)", m.fault.Index, m.fault.What)
	}
	if !m.culprit() {
		return ""
	}
	return fmt.Sprintf("; it caused a fatal fault on GPU%d's MPS server, which took every trial there down (%s)", m.fault.Index, m.fault.What)
}

// bystander is why an attempt that the fault took down goes back to the line.
func (m *mpsAttempt) bystander() string {
	return fmt.Sprintf("GPU%d's MPS server went down (%s); a bystander, requeued, not counted as a failure", m.fault.Index, m.fault.What)
}
