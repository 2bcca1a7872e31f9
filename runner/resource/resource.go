// Package resource is what the run asks of each resource a trial is admitted by (GPU memory,
// host memory, a test's count of tokens): one interface, and the run holds a list of them.
// Adding a resource is a new implementation and one entry in that list; nothing else in
// runner/ changes (Nomad's device plugins, the k8s device plugin's small interface).
package resource

import (
	"context"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/memwatch"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// Resource is one resource of the run, from its start to its end:
//
//	Open ──▶ Start (measuring) ──▶ Admit/Rooms/Release per trial ──▶ stop ──▶ Record, Ended ──▶ close
//
// Admission asks the list in its order (sched.Resource); a trial's command is handed every
// resource's rooms; each resource's consumer is on the run's stream.
type Resource interface {
	sched.Resource
	// Rooms are trial tr's rooms in the resource, for its command that runs as run (pbt: its
	// variant). First are asked before any resource's other rooms (MPS: a fault's bystander
	// goes back to the line first).
	Rooms(tr *sched.Trial, run *plan.Task) Rooms
	// Consumer is the resource's consumer of the run's stream; nil: none.
	Consumer() event.Consumer
	// Open readies the resource as the run starts (say: what it says of it); close ends it,
	// however the run ends.
	Open(say func(string)) (close func())
	// Start measures what the resource measures while trials run; stop ends it.
	Start(ctx context.Context, run Run) (stop func())
	// Record adds what the resource knows to the run's results (while it runs, and at its end).
	Record(res *results.Run)
	// Ended is told the run ended, before its history is saved.
	Ended()
}

// Rooms are a trial's rooms in one resource.
type Rooms struct {
	First []trial.Room // asked before every resource's other rooms
	Rest  []trial.Room // asked in the list's order
}

// Run is what a resource's measuring is given of the run.
type Run struct {
	Say func(string)  // a status line
	Met *prom.Metrics // nil: no server
	// Watch is the run's one watch of memory samples, made on first ask: the resource that
	// samples memory for the report keeps them there.
	Watch func() *memwatch.Watch
}

// Varier is a resource that changes what a trial runs as (the GPU resource: on-oom's
// halved param). A resource that changes nothing need not implement it.
type Varier interface {
	// Variant is what a trial runs as: as inner makes it (nil: as written), changed by the
	// resource.
	Variant(inner trial.Variant) trial.Variant
}

// Variant is what a trial runs as: as inner makes it (pbt's values; nil: as written), then
// as each resource of list that is a Varier changes it, in the list's order.
func Variant(list []Resource, inner trial.Variant) trial.Variant {
	v := inner
	for _, r := range list {
		if vr, ok := r.(Varier); ok {
			v = vr.Variant(v)
		}
	}
	return v
}

// TrialRooms are trial tr's rooms in every resource of list: each one's First, then the rest
// in the list's order.
func TrialRooms(list []Resource, tr *sched.Trial, run *plan.Task) []trial.Room {
	var first, rest []trial.Room
	for _, r := range list {
		rs := r.Rooms(tr, run)
		first, rest = append(first, rs.First...), append(rest, rs.Rest...)
	}
	return append(first, rest...)
}

// Sched is list as the scheduler asks it.
func Sched(list []Resource) []sched.Resource {
	out := make([]sched.Resource, len(list))
	for i, r := range list {
		out[i] = r
	}
	return out
}
