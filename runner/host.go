// Host memory: the run's second resource of admission beside GPU memory (runner/hostadmit),
// the OOM kills it recognises, and what it records of each trial.

package runner

import (
	"cmp"
	"context"
	"syscall"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/size"
)

// hostMemory is the container's memory as the run sees it: its OOM kills, which tell an
// outside SIGKILL's cause, and the admitter of trials by memory: (nil when no task sets it).
type hostMemory struct {
	mem   hostadmit.Reader
	admit *hostadmit.Admitter
	hist  *history.History // where learned needs are kept
}

// openHost opens the container's memory (mem; nil: its memory cgroup), and makes the host
// memory admitter when a task sets memory:.
func openHost(p *plan.Plan, mem hostadmit.Reader, hist *history.History) *hostMemory {
	if mem == nil {
		mem = hostmem.Open("")
	}
	h := &hostMemory{mem: mem, hist: hist}
	if p.NeedsHost() {
		h.admit = hostadmit.New(hostadmit.Options{Memory: mem, Margin: p.Config.HostMemoryMargin.For,
			OOMRetries: p.Config.OOMRetries, Needs: hist.Host()})
	}
	return h
}

// start measures the container's memory and the trials' processes while the run lasts,
// calling onSample (when not nil) after each measurement; the returned func stops it. A
// memory that cannot be read is said once: admission by host memory is then off.
func (h *hostMemory) start(ctx context.Context, say func(string), met *prom.Metrics, onSample func()) (stop func()) {
	if h.admit == nil {
		return func() {}
	}
	if w := h.admit.Warning(); w != "" {
		say("warning: " + w)
	}
	h.admit.Start(ctx, func([]hostadmit.TrialMemory) {
		if m, ok := h.admit.Memory(); ok {
			met.HostSample(m)
		}
		if onSample != nil {
			onSample()
		}
	})
	return h.admit.Stop
}

// hostAttempt is a command's side of the container's memory: its room (memory:, nil
// without), and what tells an outside SIGKILL's cause, the container's OOM kill count as
// its attempt started.
type hostAttempt struct {
	host   *hostMemory
	hp     *hostadmit.Placement
	kill   string // the current attempt was the kernel's OOM killer's: what it says
	before uint64 // the container's OOM kill count as the attempt started
	known  bool   // whether it could be read
}

// restart keeps the container's OOM kill counter as an attempt starts.
func (a *hostAttempt) restart() {
	a.kill = ""
	a.before, a.known = a.host.oomKills()
}

// started ties an attempt's process group to the trial's room in host memory.
func (a *hostAttempt) started(pgid int) {
	if a.hp != nil {
		a.host.admit.Started(a.hp, pgid)
	}
}

// oomKilled reports whether the kernel's OOM killer ended a failed attempt of a trial with
// memory:: the cgroup's counter rose while it ran and its process died of SIGKILL (or its
// shell said so, 137). stopped is whether runall stopped it.
func (a *hostAttempt) oomKilled(out proc.Outcome, stopped bool) (why string, ok bool) {
	if a.hp == nil || stopped || out.TimedOut {
		return "", false
	}
	killed := (out.ExitCode < 0 && out.Signal == syscall.SIGKILL) || out.ExitCode == 128+int(syscall.SIGKILL)
	why, ok = a.host.admit.OOMKilled(a.hp, killed)
	if ok {
		a.kill = why
	}
	return why, ok
}

// requeue is the host admitter's answer to an attempt the OOM killer took (oomKilled):
// the need its trial goes again with, or why it cannot.
func (a *hostAttempt) requeue() (need uint64, requeues int, err error) {
	return a.host.admit.Requeue(a.hp)
}

// outsideKill says what killed an attempt that died of a SIGKILL runall did not send: the
// kernel's OOM killer for certain when the container's counter rose while it ran (a trial
// with memory: says so with the use before the kill, in oomKilled).
func (a *hostAttempt) outsideKill() string {
	if n, ok := a.host.oomKills(); ok && a.known && n > a.before {
		if m, err := a.host.mem.Read(); err == nil {
			return "killed by the kernel's OOM killer: the container's memory limit is " + size.Format(m.Limit)
		}
	}
	return "killed by SIGKILL, which runall did not send: the kernel's OOM killer may have " +
		"(out of host memory: see dmesg, or the Pod's OOMKilled status)"
}

// detail tells the trial's result the most its processes held in host memory.
func (a *hostAttempt) detail(d *event.Detail) {
	if a.hp != nil {
		d.OnHost, d.PeakHostMemory, d.HostMemory = true, a.host.admit.Peak(a.hp), a.host.admit.Need(a.hp)
	}
}

// oomKills is the container's OOM kill counter now; ok is false where it cannot be read.
// A *hostmem.Probe reads the counter's file alone (Read reads five or six files, and this
// runs at every attempt's start and end).
func (h *hostMemory) oomKills() (n uint64, ok bool) {
	if c, isCounter := h.mem.(oomCounter); isCounter {
		return c.OOMKills()
	}
	m, err := h.mem.Read()
	if err != nil || !m.HasOOMKills {
		return 0, false
	}
	return m.OOMKills, true
}

// oomCounter reads the OOM kill counter alone (a *hostmem.Probe does).
type oomCounter interface{ OOMKills() (uint64, bool) }

// learnedByName reports learned host needs by the name of the trial each was measured from
// (as history recorded it; the group's first trial's when none is recorded).
func (h *hostMemory) learnedByName(p *plan.Plan) map[string]uint64 {
	out := map[string]uint64{}
	seen := map[string]bool{}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		if t.Host == nil || !t.Host.Auto || seen[t.Host.Group] {
			return
		}
		seen[t.Host.Group] = true
		if n, ok := h.hist.Host().Learned(t.Host.Group); ok {
			out[cmp.Or(h.hist.Host().LearnedFrom(t.Host.Group), t.Name)] = n // the trial measured
		}
	})
	return out
}
