package gpures

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/trial"
)

// oomHalving is on-oom (docs/taskfile.md): the trials out of GPU memory where their need
// cannot grow go again with a param halved (their halving room, room_oom.go, asks Halve). It keeps each
// halved trial's value, which the trial then runs with (variant); the trial's identity (its
// name, key, history and checkpoint) stays its own. A consumer of the stream, it notes the
// value each attempt ran with, for results.json.
type oomHalving struct {
	admit *admit.Admitter // its need is its group's again
	drop  Dropper         // its kept copy dropped unless keep-checkpoint; nil: none kept

	mu    sync.Mutex
	now   map[int]halved         // trial ID → its value now, once halved
	tried map[int]map[int]string // trial ID → attempt → the value it ran with
}

// newOOMHalving is on-oom for the plan's trials; nil when none sets it, or without GPUs.
func newOOMHalving(p *plan.Plan, a *admit.Admitter, drop Dropper) *oomHalving {
	if !slices.ContainsFunc(p.Trials(), func(t *plan.Task) bool { return plan.OnOOMOf(t) != nil }) {
		return nil
	}
	return &oomHalving{admit: a, drop: drop, now: map[int]halved{}, tried: map[int]map[int]string{}}
}

// Dropper drops a trial's kept copy of its checkpoint before its next attempt (the run's
// checkpoints).
type Dropper interface {
	// DropNext asks that the next attempt of the trial kept as id start with its kept copy
	// dropped and its directory emptied.
	DropNext(id string)
}

// halved is a trial's on-oom param now, and how often it was halved.
type halved struct {
	name, value string
	n           int
}

// Halve halves trial t's on-oom param from from, where on-oom allows: its need is dropped
// back to its group's, and its kept copy dropped unless keep-checkpoint says otherwise. A
// trial's space is its matrix or sample keys', or its sampler's params (a search: trial's,
// plan.Instantiate); one without a space to vary is not halved.
func (h *oomHalving) Halve(t *plan.Task, from string) (string, int, bool) {
	o := plan.OnOOMOf(t)
	v, err := strconv.Atoi(from)
	if o == nil || t.Space == nil || err != nil {
		return "", 0, false
	}
	h.mu.Lock()
	cur := h.now[t.ID]
	if cur.n >= o.Times || v/2 < o.Min {
		h.mu.Unlock()
		return "", 0, false
	}
	next := halved{name: o.Halve, value: strconv.Itoa(v / 2), n: cur.n + 1}
	h.now[t.ID] = next
	h.mu.Unlock()
	admit.Forget(h.admit, t.ID)
	if !o.KeepCheckpoint && h.drop != nil {
		h.drop.DropNext(plan.Key(t))
	}
	return next.value, next.n, true
}

// variant is what a trial runs as: as inner makes it (pbt's values; nil: as written), with
// its on-oom param halved where Halve halved it.
func (h *oomHalving) variant(inner trial.Variant) trial.Variant {
	return func(t *plan.Task) (*plan.Task, []results.Exploit) {
		v, lineage := t, []results.Exploit(nil)
		if inner != nil {
			v, lineage = inner(t)
		}
		h.mu.Lock()
		cur, ok := h.now[t.ID]
		h.mu.Unlock()
		o := plan.OnOOMOf(t)
		if !ok || o == nil || v.Space == nil {
			return v, lineage
		}
		own := slices.Clone(v.Params[len(v.Space.Template.Params):])
		for i := range own {
			if own[i].Name == o.Halve {
				own[i].Value = cur.value
			}
		}
		return v.Variant(own), lineage
	}
}

// Event notes the value each attempt of a trial with on-oom runs with.
func (h *oomHalving) Event(ev event.Event, _ func(event.Event)) {
	o := plan.OnOOMOf(ev.Task)
	if ev.Kind != event.TaskStarted || o == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	value := plan.ParamValue(ev.Task.Params, o.Halve)
	if cur, ok := h.now[ev.Task.ID]; ok {
		value = cur.value
	}
	if h.tried[ev.Task.ID] == nil {
		h.tried[ev.Task.ID] = map[int]string{}
	}
	h.tried[ev.Task.ID][ev.Attempt] = value
}

// results gives each halved trial's attempts the value they ran with, its params those it
// ended with and its initial_params those it started with.
func (h *oomHalving) results(tasks []results.Task) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range tasks {
		r := &tasks[i]
		cur, ok := h.now[r.ID]
		if !ok {
			continue
		}
		for j, a := range r.AttemptList {
			if v, ran := h.tried[r.ID][a.N]; ran {
				r.AttemptList[j].Params = map[string]string{cur.name: v}
			}
		}
		if r.InitialParams == nil {
			r.InitialParams = r.Params
		}
		r.Params = maps.Clone(r.Params)
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		r.Params[cur.name] = h.tried[r.ID][r.Attempts]
		if r.Params[cur.name] == "" {
			r.Params[cur.name] = cur.value
		}
	}
}
