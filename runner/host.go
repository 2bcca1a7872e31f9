// Host memory: the run's second resource of admission beside GPU memory (runner/hostadmit),
// the OOM kills it recognises, and what it records of each trial.

package runner

import (
	"cmp"
	"context"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
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
