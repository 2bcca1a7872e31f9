package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/runall/runall/k8spod"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// podProgressEvery is how often the Pod's annotations follow the sweep: often enough for
// kubectl, rare enough to cost the API server nothing.
const podProgressEvery = 15 * time.Second

// podProgress is the run's watcher of the Pod's progress annotations when
// RUNALL_POD_PROGRESS=1 asks for them (examples/k8s/progress); nil otherwise, or, said once,
// when runall is not in a Pod that mounts a ServiceAccount token.
func podProgress(a *app) *podWatcher {
	if a.getenv("RUNALL_POD_PROGRESS") != "1" {
		return nil
	}
	dir := a.getenv("RUNALL_POD_SERVICEACCOUNT_DIR") // tests; the kubelet's mount otherwise
	if dir == "" {
		dir = k8spod.ServiceAccountDir
	}
	c, err := k8spod.FromEnv(a.getenv, dir)
	if err != nil {
		fmt.Fprintf(a.stderr, "runall: progress annotations off: %v\n", err)
		return nil
	}
	return &podWatcher{c: c, say: func(line string) { fmt.Fprintln(a.stderr, "runall: "+line) }}
}

// podWatcher publishes the sweep's figures to the Pod's annotations while the run goes.
type podWatcher struct {
	c   *k8spod.Client
	say func(string)
}

// Event: the figures come from the run's results (WatchRun), not from the events.
func (w *podWatcher) Event(event.Event, func(event.Event)) {}

// WatchRun publishes until the returned func is called, and once more then.
func (w *podWatcher) WatchRun(v runner.View) func() {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.c.Publish(ctx, podProgressEvery, func() k8spod.Progress { return sweepProgress(v.Results(), start, time.Now()) }, w.say)
	}()
	return func() { cancel(); <-done }
}

// sweepProgress is the Pod's figures from the run's results so far: its tasks done, running
// and waiting (pending or paused), the best trial by the objective, and an ETA at the pace
// of the tasks done so far.
func sweepProgress(res *results.Run, start, now time.Time) k8spod.Progress {
	var p k8spod.Progress
	for _, t := range res.Tasks {
		switch t.Status {
		case results.StatusRunning:
			p.Running++
		case results.StatusPending, results.StatusPaused:
			p.Waiting++
		default:
			p.Done++
		}
	}
	if left := p.Running + p.Waiting; p.Done > 0 && left > 0 {
		p.ETA = now.Sub(start) / time.Duration(p.Done) * time.Duration(left)
	}
	for _, t := range res.Tasks {
		if res.Best == "" || t.Name != res.Best {
			continue
		}
		p.Best = t.Name
		if v, ok := res.Objective.Value(t); ok {
			p.Best += " " + res.Objective.Metric + "=" + strconv.FormatFloat(v, 'g', 6, 64)
		}
	}
	return p
}
