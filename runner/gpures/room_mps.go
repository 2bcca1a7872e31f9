package gpures

import (
	"fmt"
	"strings"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
)

// mpsRoom is a command's side of its GPU's MPS server: the cap it sets in the environment,
// and what a failed attempt means when that server went down. Every client of a server that
// died or met a fatal fault goes with it: the trial whose fault it was failed (its rule of
// retries decides), the others were only bystanders, and go back to the line with the room
// they had, not counted as failures.
type mpsRoom struct {
	iso     MPS
	p       *admit.Placement
	threads int        // the task's share of the GPU's threads (gpu: threads)
	pgid    int        // the current attempt's process group
	fault   *mps.Fault // what took its server down, once its end was looked at
}

// MPS is the GPUs' MPS servers as a trial's room asks them.
type MPS interface {
	// Check looks at the servers of devs: the fault that took one down, nil when well.
	Check(devs []int) *mps.Fault
	// Env makes a trial placed at p a client of its GPU's server, capped at its room.
	Env(p *admit.Placement, threads int) []string
	// RequeueBystander reports whether the task may go back to the line as a fault's
	// bystander once more, and counts it.
	RequeueBystander(taskID int) bool
}

// NewMPSRoom is the room of a trial placed at p on the GPUs of iso's servers; threads is its
// task's share of a GPU's threads (gpu: threads).
func NewMPSRoom(iso MPS, p *admit.Placement, threads int) trial.Room {
	return &mpsRoom{iso: iso, p: p, threads: threads}
}

// Begin forgets an earlier attempt's fault.
func (m *mpsRoom) Begin(*event.Event, trial.Attempt) { m.fault = nil }

// Started keeps the attempt's process group, which a server's log names.
func (m *mpsRoom) Started(pgid int) { m.pgid = pgid }

// Line has nothing to read: the server's log says what went wrong.
func (m *mpsRoom) Line(string) {}

// Ended looks at whether the attempt's server went down.
func (m *mpsRoom) Ended(proc.Outcome) { m.fault = m.iso.Check(m.p.Devices) }

// Env makes the trial a client of its GPU's server, capped at the room it was admitted with.
func (m *mpsRoom) Env(env []string) []string {
	for _, kv := range m.iso.Env(m.p, m.threads) {
		k, v, _ := strings.Cut(kv, "=")
		env = envlist.Set(env, k, v)
	}
	return env
}

// Says what a failure reason adds of the fault: whose it was.
func (m *mpsRoom) Says(proc.Outcome, bool) (cause, note string) { return "", m.note() }

// Failed sends a fault's bystander back to the line with the room it had, as often as a
// bystander may go (MPS.RequeueBystander); where the run halts, it is stopped, not failed.
func (m *mpsRoom) Failed(f trial.Failure) trial.Answer {
	if !m.bystanderOf() {
		return trial.Answer{}
	}
	a := trial.Answer{Halted: m.bystander() + "; not requeued: the run is stopping"}
	if !f.Halted && m.iso.RequeueBystander(f.Task.ID) {
		why := m.bystander()
		a.Requeue = &trial.Requeue{Need: m.p.Need, Why: why, Reason: why}
	}
	return a
}

// Detail has nothing to add: the GPU room tells the memory.
func (m *mpsRoom) Detail(*event.Detail) {}

// culprit reports whether the fault was this attempt's own: the server's log named one of
// its processes.
func (m *mpsRoom) culprit() bool {
	return m.fault != nil && m.fault.PGID != 0 && m.fault.PGID == m.pgid
}

// bystanderOf reports whether a fault on its server, not its own, took the attempt down.
func (m *mpsRoom) bystanderOf() bool { return m.fault != nil && !m.culprit() }

// note is what a failure reason adds of the fault: that it was this attempt's.
func (m *mpsRoom) note() string {
	if m.bystanderOf() {
		// Requeued as often as a bystander may be (MPS.RequeueBystander), or the run stops.
		return fmt.Sprintf("; GPU%d's MPS server went down (%s)", m.fault.Index, m.fault.What)
	}
	if !m.culprit() {
		return ""
	}
	return fmt.Sprintf("; it caused a fatal fault on GPU%d's MPS server, which took every trial there down (%s)", m.fault.Index, m.fault.What)
}

// bystander is why an attempt that the fault took down goes back to the line.
func (m *mpsRoom) bystander() string {
	return fmt.Sprintf("GPU%d's MPS server went down (%s); a bystander, requeued, not counted as a failure", m.fault.Index, m.fault.What)
}
