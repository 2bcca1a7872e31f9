package gpures

import (
	"strconv"
	"sync"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/sharing"
)

// A trial's rate is measured over a window as long as its steps need to be told apart:
// at least minRateWindow (progress is told at most once a second; a little less, as the
// stream delivers it late or early) and windowSteps steps, so that a step's rounding is at
// most an eighth of the rate (at 10 steps a second, about a second), and at most
// rateWindow whatever its steps (over two seconds a slow trial's rounding is what it is).
const (
	minRateWindow = 900 * time.Millisecond
	windowSteps   = 8
	rateWindow    = 2 * time.Second
)

// gpuSharing is gpu-sharing: progress in the run: the GPU room asks it before it places a
// trial that has the memory (gate), and tells it where each trial was placed and when it
// left (placed, left); as a consumer of the stream it measures each trial's rate from its
// TaskProgress events, tells the controller, says each decision, and has the GPU room of
// the trial a Lower names ask for its pause at its next copy (GPURoom.Pause), resuming
// it through the run's pauser once its pause is back in its source, where it waits for room
// again. The controller (runner/sharing) decides.
type gpuSharing struct {
	clock sharingClock
	wake  func() // tells the trials waiting for a GPU to ask the gate again
	hist  *history.History
	pause Pauser                   // nil: no trial has checkpoint:, none is paused
	rooms *resource.Held[*GPURoom] // each placed trial's GPU room, which asks for its pause

	mu     sync.Mutex
	ctl    *sharing.Controller
	trials map[*plan.Task]*sharedTrial // by the trial's task and each of its steps'
	named  map[string]*plan.Task       // trials by the controller's ID (their names)
	paused map[*plan.Task]bool         // paused to lower a GPU: resumed once back in their source
	said   []results.SharingDecision
	models gpuModels
}

// gpuModels are the GPUs' models (NVML's names) as the samples tell them, and the model
// each trial was last measured alone on: its rate alone is kept in the history for that
// model only.
type gpuModels struct {
	of      map[string]string // by GPU (gpuName)
	aloneOn map[string]string // by trial (its name)
}

// sharedTrial is a trial placed on GPUs under gpu-sharing: progress.
type sharedTrial struct {
	task *plan.Task
	tr   *sched.Trial // as admitted: its GPU room is found by it
	devs []string
	win  rateWin
}

// sharingClock is the controller's clock (the run's elapsed time) and how long a rate's
// window on it lasts.
type sharingClock struct {
	start  time.Time
	window windowRule
}

// rateWin is a trial's rate window: where it began, on the controller's clock, and the
// steps done then.
type rateWin struct {
	at   time.Duration
	iter float64
	set  bool // false: the next progress starts a window
}

// windowRule is how long a rate window lasts: at least least and steps steps, at most most.
type windowRule struct {
	least, most time.Duration
	steps       float64
}

// closes reports whether window w, reaching now with iter steps done, gives a rate.
func (r windowRule) closes(w rateWin, now time.Duration, iter float64) bool {
	d := now - w.at
	return d >= r.most || (d >= r.least && iter-w.iter >= r.steps)
}

// newGPUSharing is nil unless a trial asks for gpu-sharing: progress; overlap is whether
// its GPUs run their trials' kernels at once (MPS: sharing.Options.Overlap).
// wake tells the trials that wait for a GPU to ask again (admit.Closed.Wake).
func newGPUSharing(p *plan.Plan, hist *history.History, pause Pauser, rooms *resource.Held[*GPURoom], overlap bool, wake func()) *gpuSharing {
	if !wantsProgressSharing(p) {
		return nil
	}
	return &gpuSharing{clock: sharingClock{start: time.Now(), window: windowRule{least: minRateWindow, most: rateWindow, steps: windowSteps}},
		wake: wake, hist: hist, pause: pause, rooms: rooms,
		ctl: sharing.New(sharing.Options{MinWindow: minRateWindow, Overlap: overlap}), trials: map[*plan.Task]*sharedTrial{},
		named: map[string]*plan.Task{}, paused: map[*plan.Task]bool{},
		models: gpuModels{of: map[string]string{}, aloneOn: map[string]string{}}}
}

// wantsProgressSharing is whether a trial of p asks for gpu-sharing: progress.
func wantsProgressSharing(p *plan.Plan) bool {
	wanted := false
	plan.Walk(p.Tasks, func(t *plan.Task) { wanted = wanted || progressShared(t) })
	return wanted
}

// progressShared is whether t shares its GPU by measured progress.
func progressShared(t *plan.Task) bool {
	return t.GPU != nil && t.GPU.Sharing.Mode == plan.SharingProgress
}

func (s *gpuSharing) now() time.Duration { return time.Since(s.clock.start) }

// gpuName is a device as the controller and the output name it.
func gpuName(dev int) string { return strconv.Itoa(dev) }

// spec is trial t as the controller knows it on GPU dev: its rate alone from the history,
// where it was measured on a GPU of dev's model. The caller holds s.mu.
func (s *gpuSharing) spec(t *plan.Task, dev string) sharing.Trial {
	kind := t.Group
	if kind == "" {
		kind = t.Key
	}
	alone, _ := s.hist.RateAlone(t.Key, s.models.of[dev])
	return sharing.Trial{ID: t.Name, Kind: kind, Alone: alone, CanPause: t.Checkpoint != nil && s.pause != nil}
}

// gate is what the GPU admitter asks of a device with the memory for t; nil for a trial
// that shares by memory.
func (s *gpuSharing) gate(t *plan.Task) func(dev int) (bool, string) {
	if s == nil || !progressShared(t) {
		return nil
	}
	return func(dev int) (bool, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		d := s.ctl.MayAdmit(s.now(), gpuName(dev), s.spec(t, gpuName(dev)))
		return d.Action == sharing.Admit, "gpu-sharing: " + d.String()
	}
}

// placed tells the controller that tr starts on p's devices.
func (s *gpuSharing) placed(tr *sched.Trial, p *admit.Placement) {
	if s == nil || !progressShared(tr.Task) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st := &sharedTrial{task: tr.Task, tr: tr}
	for _, dev := range p.Devices {
		st.devs = append(st.devs, gpuName(dev))
	}
	s.trials[tr.Task] = st
	for _, c := range plan.Commands(tr.Task) {
		s.trials[c] = st
	}
	s.named[tr.Task.Name] = tr.Task
	for _, d := range st.devs {
		s.ctl.Started(now, d, s.spec(tr.Task, d))
		s.restartWindows(d)
	}
}

// left tells the controller that tr left its devices: it ended, paused or went back.
func (s *gpuSharing) left(tr *sched.Trial) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.trials[tr.Task]
	if st == nil {
		return
	}
	delete(s.trials, tr.Task)
	for _, c := range plan.Commands(tr.Task) {
		delete(s.trials, c)
	}
	now := s.now()
	for _, d := range st.devs {
		s.ctl.Left(now, d, st.task.Name)
		s.restartWindows(d)
	}
}

// restartWindows starts each rate on dev afresh at its trial's next progress: its mix
// changed, and a window reaching back before the change would judge nothing.
func (s *gpuSharing) restartWindows(dev string) {
	for _, st := range s.trials {
		for _, d := range st.devs {
			if d == dev {
				st.win.set = false
			}
		}
	}
}
