package hostres

import (
	"syscall"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
	"github.com/runall/runall/size"
)

// hostMemRoom is a command's side of the container's memory: its room (memory:, nil without),
// and what tells an outside SIGKILL's cause, the container's OOM kill count as its attempt
// started. Every command has one: an outside SIGKILL is told whether or not it set memory:.
type hostMemRoom struct {
	mem    hostadmit.Reader     // the container's memory
	admit  *hostadmit.Admitter  // nil when no task sets memory:
	hp     *hostadmit.Placement // nil without memory:
	kill   string               // the current attempt was the kernel's OOM killer's: what it says
	before uint64               // the container's OOM kill count as the attempt started
	known  bool                 // whether it could be read
}

// NewHostRoom is a command's room in the container's memory mem: hp, the trial's room that
// admit reserved (nil: the task sets no memory:, and the room only tells an outside kill).
func NewHostRoom(mem hostadmit.Reader, admit *hostadmit.Admitter, hp *hostadmit.Placement) trial.Room {
	return &hostMemRoom{mem: mem, admit: admit, hp: hp}
}

// Begin keeps the container's OOM kill counter as an attempt starts.
func (a *hostMemRoom) Begin(*event.Event, trial.Attempt) {
	a.kill = ""
	a.before, a.known = oomKills(a.mem)
}

// Started ties an attempt's process group to the trial's room in host memory.
func (a *hostMemRoom) Started(pgid int) {
	if a.hp != nil {
		a.admit.Started(a.hp, pgid)
	}
}

// Line has nothing to read: the kernel says when memory ran out.
func (a *hostMemRoom) Line(string) {}

// Ended has nothing to look at before the attempt is said: Failed asks the admitter.
func (a *hostMemRoom) Ended(proc.Outcome) {}

// Env adds nothing: host memory is admitted, not capped.
func (a *hostMemRoom) Env(env []string) []string { return env }

// Says how the attempt failed when the OOM killer took it, or a SIGKILL runall did not
// send killed it.
func (a *hostMemRoom) Says(out proc.Outcome, runallStopped bool) (cause, note string) {
	switch {
	case a.kill != "":
		return a.kill, ""
	case out.Err != nil || out.TimedOut:
		return "", ""
	case out.ExitCode < 0 && out.Signal == syscall.SIGKILL && !runallStopped:
		return a.outsideKill(), ""
	}
	return "", ""
}

// Failed sends a trial the kernel's OOM killer took back to the line with the host
// admitter's raised need, or fails it when no need can fit or its oom-retries are spent.
func (a *hostMemRoom) Failed(f trial.Failure) trial.Answer {
	why, ok := a.oomKilled(f.Out, f.Halted || f.Stopped)
	if !ok {
		return trial.Answer{}
	}
	need, requeues, err := a.admit.Requeue(a.hp)
	if err != nil {
		return trial.Answer{Mark: why, Fatal: err, Class: failclass.OOM}
	}
	return trial.Answer{Mark: why, Class: failclass.OOM, Requeue: &trial.Requeue{Need: need, Requeues: requeues, Why: why + "; requeued",
		Reason: hostadmit.RequeueReason(need)}}
}

// oomKilled reports whether the kernel's OOM killer ended a failed attempt of a trial with
// memory:: the cgroup's counter rose while it ran and its process died of SIGKILL (or its
// shell said so, 137). stopped is whether runall stopped it.
func (a *hostMemRoom) oomKilled(out proc.Outcome, stopped bool) (why string, ok bool) {
	if a.hp == nil || stopped || out.TimedOut {
		return "", false
	}
	killed := (out.ExitCode < 0 && out.Signal == syscall.SIGKILL) || out.ExitCode == 128+int(syscall.SIGKILL)
	why, ok = a.admit.OOMKilled(a.hp, killed)
	if ok {
		a.kill = why
	}
	return why, ok
}

// outsideKill says what killed an attempt that died of a SIGKILL runall did not send: the
// kernel's OOM killer for certain when the container's counter rose while it ran (a trial
// with memory: says so with the use before the kill, in oomKilled).
func (a *hostMemRoom) outsideKill() string {
	if n, ok := oomKills(a.mem); ok && a.known && n > a.before {
		if m, err := a.mem.Read(); err == nil {
			return "killed by the kernel's OOM killer: the container's memory limit is " + size.Format(m.Limit)
		}
	}
	return "killed by SIGKILL, which runall did not send: the kernel's OOM killer may have " +
		"(out of host memory: see dmesg, or the Pod's OOMKilled status)"
}

// Detail tells the trial's result the most its processes held in host memory.
func (a *hostMemRoom) Detail(d *event.Detail) {
	if a.hp != nil {
		d.OnHost, d.PeakHostMemory, d.HostMemory = true, a.admit.Peak(a.hp), a.admit.Need(a.hp)
	}
}

// oomKills is the container's OOM kill counter now; ok is false where it cannot be read.
// A *hostmem.Probe reads the counter's file alone (Read reads five or six files, and this
// runs at every attempt's start and end).
func oomKills(mem hostadmit.Reader) (n uint64, ok bool) {
	if c, isCounter := mem.(oomCounter); isCounter {
		return c.OOMKills()
	}
	m, err := mem.Read()
	if err != nil || !m.HasOOMKills {
		return 0, false
	}
	return m.OOMKills, true
}

// oomCounter reads the OOM kill counter alone (a *hostmem.Probe does).
type oomCounter interface{ OOMKills() (uint64, bool) }
