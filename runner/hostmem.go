// Host memory: the run's second resource of admission beside GPU memory (runner/hostadmit),
// the OOM kills it recognises, and what it records of each trial.

package runner

import (
	"context"
	"syscall"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/size"
)

// openHost opens the container's memory, and makes the host memory admitter when a task
// sets memory:.
func (r *run) openHost() {
	mem := r.opts.HostMemory
	if mem == nil {
		mem = hostmem.Open("")
	}
	r.hostMem = mem
	if !r.plan.NeedsHost() {
		return
	}
	r.host = hostadmit.New(hostadmit.Options{Memory: mem, Margin: r.plan.Config.HostMemoryMargin.For,
		OOMRetries: r.plan.Config.OOMRetries, Needs: hostNeeds{r.hist}})
}

// startHost measures the container's memory and the trials' processes while the run lasts;
// the returned func stops it. A memory that cannot be read is said once: admission by host
// memory is then off.
func (r *run) startHost(ctx context.Context) (stop func()) {
	if r.host == nil {
		return func() {}
	}
	if w := r.host.Warning(); w != "" {
		r.emit(event.Event{Kind: event.RunStatus, Line: "warning: " + w})
	}
	r.host.Start(ctx, func([]hostadmit.TrialMemory) {
		if m, ok := r.host.Memory(); ok {
			r.met.hostMemory(m)
		}
	})
	return r.host.Stop
}

// hostNeeds keeps learned host needs in the run's history, beside learned GPU needs.
type hostNeeds struct{ h *history.History }

func (n hostNeeds) Learned(group string) (uint64, bool) { return n.h.HostLearned(group) }
func (n hostNeeds) SetLearned(group, name string, need uint64) {
	n.h.SetHostLearned(group, name, need)
}

// hostStarted ties an attempt's process group to the trial's room in host memory.
func (c *command) hostStarted(pgid int) {
	if c.hp != nil {
		c.r.host.Started(c.hp, pgid)
	}
}

// hostOOM takes a failed attempt that the kernel's OOM killer ended: the cgroup's counter
// rose while the trial ran and its process died of SIGKILL (or its shell said so, 137). It
// says so, and sends the trial back to the line with a raised need, or fails it when no
// need can fit or its oom-retries are spent. It reports whether the attempt was one.
func (c *command) hostOOM(attempt int, out proc.Outcome) bool {
	if c.hp == nil || c.r.isHalted() || c.r.ledger.stoppedBy() != 0 || out.TimedOut {
		return false
	}
	killed := (out.ExitCode < 0 && out.Signal == syscall.SIGKILL) || out.ExitCode == 128+int(syscall.SIGKILL)
	why, ok := c.r.host.OOMKilled(c.hp, killed)
	if !ok {
		return false
	}
	c.hostKill = why
	c.log.mark("attempt %d: %s", attempt, why)
	need, requeues, err := c.r.host.Requeue(c.hp)
	if err != nil {
		c.fatal = err
		return true
	}
	c.requeued(attempt, out, requeues, why+"; requeued")
	c.requeue = &commandResult{oom: true, need: need, why: hostadmit.RequeueReason(need)}
	return true
}

// oomKills is the container's OOM kill counter now; ok is false where it cannot be read.
func (r *run) oomKills() (n uint64, ok bool) {
	m, err := r.hostMem.Read()
	if err != nil || !m.HasOOMKills {
		return 0, false
	}
	return m.OOMKills, true
}

// noteOOMCount keeps the container's OOM kill counter as an attempt starts.
func (c *command) noteOOMCount() {
	c.oomBefore, c.oomKnown = c.r.oomKills()
}

// outsideKill says what killed an attempt that died of a SIGKILL runall did not send: the
// kernel's OOM killer for certain when the container's counter rose while it ran (a trial
// with memory: says so with the use before the kill, in hostOOM).
func (c *command) outsideKill() string {
	if n, ok := c.r.oomKills(); ok && c.oomKnown && n > c.oomBefore {
		if m, err := c.r.hostMem.Read(); err == nil {
			return "killed by the kernel's OOM killer: the container's memory limit is " + size.Format(m.Limit)
		}
	}
	return "killed by SIGKILL, which runall did not send: the kernel's OOM killer may have " +
		"(out of host memory: see dmesg, or the Pod's OOMKilled status)"
}

// recordHost keeps in the trial's result the most its processes held in host memory.
func (c *command) recordHost(rt *results.Task) {
	if c.hp != nil {
		rt.PeakHostMemory = max(rt.PeakHostMemory, c.r.host.Peak(c.hp))
		rt.HostMemory = c.hp.Need
	}
}

// learnedHostByName reports learned host needs by the name of each group's first trial.
func (r *run) learnedHostByName() map[string]uint64 {
	out := map[string]uint64{}
	seen := map[string]bool{}
	plan.Walk(r.plan.Tasks, func(t *plan.Task) {
		if t.Host == nil || !t.Host.Auto || seen[t.Host.Group] {
			return
		}
		seen[t.Host.Group] = true
		if n, ok := r.hist.HostLearned(t.Host.Group); ok {
			out[t.Name] = n
		}
	})
	return out
}
