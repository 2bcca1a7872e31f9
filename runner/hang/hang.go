// Package hang catches a hung trial from what it shows (hang-after, docs/taskfile.md "When
// trials go wrong"): a consumer of the run's events that learns each trial's pace from its
// signs of life (progress steps, metric values, checkpoint saves; output lines for a trial that shows
// neither) and, on a goroutine of its own, ends an attempt whose signs stopped for longer
// than its rule. It keeps what it can for the person who reads it later (py-spy's dump of
// its processes, else each one's kernel wait channel) and hands the attempt to the Ender,
// which ends it alone: its command sends it back to the line, to resume from its checkpoint,
// as a hung attempt.
package hang

import (
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
)

// Ender ends a running trial's attempt as hung (executor.Running); it returns the process
// groups it signalled, none when the trial no longer runs that attempt.
type Ender interface {
	Hang(t *plan.Task, hu executor.Hung) []int
	Groups(t *plan.Task) []int // the process groups of its commands
}

// Holder holds a hung trial's GPUs out of admission until its processes left them
// (admit.Release.HoldUntilGone).
type Holder interface {
	HoldUntilGone(uuids []string, pids []int, wait time.Duration, who string, say func(string))
}

// Options are what a Watch is made with.
type Options struct {
	Ender Ender
	Hold  Holder        // nil: no GPU to hold
	Tick  time.Duration // how often the running trials are judged (default 1s)
	// Diagnose, when set, replaces the dump of a hung trial's processes (tests).
	Diagnose func(pgids []int) string
	Now      func() time.Time
}

// Watch is the consumer.
type Watch struct {
	o     Options
	notes event.Notes

	mu     sync.Mutex
	trials map[*plan.Task]*pace
	groups map[*plan.Faults]time.Duration // each block's longest gap between a trial's signs
	stop   chan struct{}
	done   chan struct{}
}

// New is the watch of p's trials, its goroutine started; nil when no task's rules judge
// (hang-after and hang-after-start off everywhere).
func New(p *plan.Plan, o Options) *Watch {
	if !judges(p.Tasks) {
		return nil
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Diagnose == nil {
		o.Diagnose = diagnose
	}
	w := &Watch{o: o, trials: map[*plan.Task]*pace{}, groups: map[*plan.Faults]time.Duration{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// judges reports whether any of tasks (or their trials and steps) may be found hung.
func judges(tasks []*plan.Task) bool {
	for _, t := range tasks {
		if t.Faults != nil && (t.Faults.Hang.After != 0 && t.Faults.Hang.After != -1 || t.Faults.Hang.StartRule() > 0) {
			return true
		}
		if judges(t.Parallel) || judges(t.Steps) {
			return true
		}
	}
	return false
}

// Notes are what the watch says: each trial it found hung.
func (w *Watch) Notes() *event.Notes { return &w.notes }

// Event learns from a trial's signs; it only records, on the emitting goroutine.
func (w *Watch) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.RunEnded {
		w.Close()
		return
	}
	if ev.Task == nil || ev.Task.Faults == nil {
		return
	}
	now := w.o.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.trials[ev.Task]
	switch ev.Kind {
	case event.TaskStarted:
		if p == nil {
			p = &pace{}
			w.trials[ev.Task] = p
		}
		p.attempt, p.started, p.last, p.kind, p.real, p.caught = ev.Attempt, now, time.Time{}, "", false, false
		p.devs = ev.Devices
	case event.TaskEnded:
		if p != nil && ev.End == event.EndFinal {
			delete(w.trials, ev.Task)
		}
	case event.TaskProgress:
		w.sign(p, ev.Task, signProgress, now)
	case event.TaskMetric:
		w.sign(p, ev.Task, signMetric, now)
	case event.TaskOutput:
		kind := signOutput
		if ev.Stream == "stdout" && strings.HasPrefix(ev.Line, "runall-checkpoint ") {
			kind = signSaved
		}
		w.sign(p, ev.Task, kind, now)
	}
}

// sign records one of t's signs, and what it teaches its block (w.mu held).
func (w *Watch) sign(p *pace, t *plan.Task, kind string, now time.Time) {
	if p == nil {
		return
	}
	if gap := p.sign(kind, now); gap > 0 {
		b := t.Faults.Block()
		w.groups[b] = max(w.groups[b], gap)
	}
}

// Close stops the watch's goroutine; it judges no more.
func (w *Watch) Close() {
	w.mu.Lock()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.mu.Unlock()
	<-w.done
}

func (w *Watch) loop() {
	defer close(w.done)
	tick := time.NewTicker(w.o.Tick)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			w.judge()
		}
	}
}

// hung is a trial found hung, to be ended off the lock.
type hung struct {
	t    *plan.Task
	hu   executor.Hung
	devs []string // the GPUs it holds, by UUID
}

// judge ends every running trial whose signs stopped for longer than its rule.
func (w *Watch) judge() {
	now := w.o.Now()
	var found []hung
	w.mu.Lock()
	for t, p := range w.trials {
		if why := p.verdict(t.Faults.Hang, w.groups[t.Faults.Block()], now); why != "" {
			p.caught = true
			found = append(found, hung{t: t, devs: p.devs, hu: executor.Hung{Attempt: p.attempt, Reason: "hung: " + why}})
		}
	}
	w.mu.Unlock()
	for _, h := range found {
		w.end(h)
	}
}

// end keeps what can be known of a hung trial's processes, then ends its attempt.
func (w *Watch) end(h hung) {
	pgs := w.o.Ender.Groups(h.t)
	pids := membersOf("/proc", pgs)
	h.hu.Dump = w.o.Diagnose(pgs)
	if w.o.Hold != nil && h.t.Faults.Hang.ReleaseWait > 0 {
		// Held before the stop, while its processes still show what they hold.
		w.o.Hold.HoldUntilGone(h.devs, pids, h.t.Faults.Hang.ReleaseWait, h.t.Name, w.notes.Say)
	}
	if len(w.o.Ender.Hang(h.t, h.hu)) > 0 {
		w.notes.Say(h.t.Name + ": " + h.hu.Reason + "; stopped and requeued (what its processes waited on: in its log)")
	}
}
