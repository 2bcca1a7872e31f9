package runner

import "github.com/runall/runall/runner/diverge"

// newDiverged is the run's watch of diverged trials (diverged-on), a consumer of its events
// that stops a trial whose watched metric went NaN or infinite through the run's Stopper;
// nil when every rule is off.
func (r *runDriver) newDiverged() *diverge.Watch {
	w := diverge.New(r.plan)
	if w != nil {
		w.UseStopper(r.launch.procs.running)
	}
	return w
}
