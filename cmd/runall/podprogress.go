package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/runall/runall/k8spod"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// podProgressEvery is how often the Pod's annotations and Trainer's status follow the sweep:
// often enough for kubectl, rare enough to cost the API server nothing.
const podProgressEvery = 15 * time.Second

// podProgress is the run's watcher of its progress in Kubernetes: the Pod's annotations when
// RUNALL_POD_PROGRESS=1 asks for them (examples/k8s/progress), Kubeflow Trainer's status
// endpoint when Trainer gives one (KUBEFLOW_TRAINER_SERVER_URL; posted by the Pod of
// completion index 0 alone, or by every Pod of a Job without indexes: under claims each
// posts the sweep's figures); nil when neither, or, said once, when what was asked for
// cannot be reached.
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
	figures := &latest{age: podProgressEvery / 3, read: func(ctx context.Context) k8spod.Progress { return viewProgress(ctx, v, start, time.Now()) }}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range w.sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k8spod.Publish(ctx, s.Sink, s.name, podProgressEvery, figures.get, w.say)
		}()
	}
	return func() { figures.expire(); cancel(); wg.Wait() } // the last figures are read anew
}

// latest are the figures the sinks publish alike, read once for all (a claims sweep's from
// its store): read again once what it read last is older than age, or expired.
type latest struct {
	age  time.Duration
	read func(context.Context) k8spod.Progress

	mu   sync.Mutex
	last k8spod.Progress
	at   time.Time // when last was read; zero: read at the next get
}

func (l *latest) get(ctx context.Context) k8spod.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at.IsZero() || time.Since(l.at) >= l.age {
		l.last, l.at = l.read(ctx), time.Now()
	}
	return l.last
}

func (l *latest) expire() {
	l.mu.Lock()
	l.at = time.Time{}
	l.mu.Unlock()
}

// viewProgress is the figures a Pod publishes: a claims sweep's from its store, every
// runall's trials (sweepProgress), once the run joined it; else the run's own, those of
// its shard when it has one (runProgress).
func viewProgress(ctx context.Context, v runner.View, start, now time.Time) k8spod.Progress {
	if v.Sweep != nil {
		if f, ok := v.Sweep(ctx, podProgressEvery); ok {
			return sweepProgress(f, start, now)
		}
	}
	return runProgress(v.Results(), start, now)
}

// sweepProgress is a claims sweep's figures: its trials done (recorded by any runall),
// running (under a live claim) and waiting, the best over every record, and an ETA at the
// sweep's pace (its trials done since its first record's start, or this run's if earlier).
func sweepProgress(f claimsource.Figures, start, now time.Time) k8spod.Progress {
	p := k8spod.Progress{Done: f.Done, Running: f.Running, Waiting: f.Waiting, Scope: "sweep"}
	if !f.Since.IsZero() && f.Since.Before(start) {
		start = f.Since
	}
	p.ETA = eta(now.Sub(start), p.Done, p.Running+p.Waiting)
	if f.HasBest {
		p.Best = f.Best.Name
		if v, ok := f.Objective.Value(f.Best); ok {
			p.Metric, p.Value = f.Objective.Metric, strconv.FormatFloat(v, 'g', 6, 64)
		}
	}
	return p
}

// eta is the time left for left tasks at the pace of done in elapsed; 0 when unknown.
func eta(elapsed time.Duration, done, left int) time.Duration {
	if done == 0 || left == 0 {
		return 0
	}
	return elapsed / time.Duration(done) * time.Duration(left)
}

// runProgress is the Pod's figures from the run's results so far: its tasks done, running
// and waiting (pending or paused), the best trial by the objective, and an ETA at the pace
// of the tasks done so far. A shard's figures are its own: no Pod of fixed shards sees
// another's trials (Scope "shard I/N").
func runProgress(res *results.Run, start, now time.Time) k8spod.Progress {
	p := k8spod.Progress{Scope: "sweep"}
	if res.Shard != "" {
		p.Scope = "shard " + res.Shard
	}
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
	p.ETA = eta(now.Sub(start), p.Done, p.Running+p.Waiting)
	for _, t := range res.Tasks {
		if !res.IsBest(t) {
			continue
		}
		p.Best = t.Name
		if v, ok := res.Objective.Value(t); ok {
			p.Metric, p.Value = res.Objective.Metric, strconv.FormatFloat(v, 'g', 6, 64)
		}
	}
	return p
}
