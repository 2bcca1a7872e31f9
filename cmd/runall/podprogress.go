package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/runall/runall/k8spod"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// podProgressEvery is how often the Pod's annotations and Trainer's status follow the sweep:
// often enough for kubectl, rare enough to cost the API server nothing.
const podProgressEvery = 15 * time.Second

// podProgress is the run's watcher of its progress in Kubernetes: the Pod's annotations when
// RUNALL_POD_PROGRESS=1 asks for them (examples/k8s/progress), Kubeflow Trainer's status
// endpoint when Trainer gives one (KUBEFLOW_TRAINER_STATUS_URL; posted by the Pod of
// completion index 0 alone, or the only one); nil when neither, or, said once, when what was
// asked for cannot be reached.
func podProgress(a *app) *podWatcher {
	w := &podWatcher{say: func(line string) { fmt.Fprintln(a.stderr, "runall: "+line) }}
	if a.getenv("RUNALL_POD_PROGRESS") == "1" {
		dir := a.getenv("RUNALL_POD_SERVICEACCOUNT_DIR") // tests; the kubelet's mount otherwise
		if dir == "" {
			dir = k8spod.ServiceAccountDir
		}
		if c, err := k8spod.FromEnv(a.getenv, dir); err != nil {
			w.say("progress annotations off: " + err.Error())
		} else {
			w.sinks = append(w.sinks, namedSink{"progress annotations", c})
		}
	}
	if i := a.getenv("JOB_COMPLETION_INDEX"); i == "" || i == "0" {
		if t, err := k8spod.TrainerFromEnv(a.getenv); err != nil {
			w.say("Kubeflow Trainer status off: " + err.Error())
		} else if t != nil {
			w.sinks = append(w.sinks, namedSink{"Kubeflow Trainer status", t})
		}
	}
	if len(w.sinks) == 0 {
		return nil
	}
	return w
}

// namedSink is a sink and what runall calls it when it speaks of it.
type namedSink struct {
	name string
	k8spod.Sink
}

// podWatcher publishes the sweep's figures to its sinks while the run goes.
type podWatcher struct {
	sinks []namedSink
	say   func(string)
}

// Event: the figures come from the run's results (WatchRun), not from the events.
func (w *podWatcher) Event(event.Event, func(event.Event)) {}

// WatchRun publishes until the returned func is called, and once more then.
func (w *podWatcher) WatchRun(v runner.View) func() {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range w.sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k8spod.Publish(ctx, s.Sink, s.name, podProgressEvery, func() k8spod.Progress { return sweepProgress(v.Results(), start, time.Now()) }, w.say)
		}()
	}
	return func() { cancel(); wg.Wait() }
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
			p.Metric, p.Value = res.Objective.Metric, strconv.FormatFloat(v, 'g', 6, 64)
		}
	}
	return p
}
