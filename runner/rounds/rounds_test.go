package rounds

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// sweep is a faked run of a block's trials: at most slots at once, each reporting its value
// step by step, pausing when asked (its checkpoint is at the step it reported), resumed
// from where it paused, copied from a donor on an exploit. It drives the consumer as a run
// would, through events, and records how each trial ended.
type sweep struct {
	t      *testing.T
	r      *Rounds
	steps  int
	slots  chan struct{}
	mu     sync.Mutex
	at     map[*plan.Task]int        // the step each trial's checkpoint holds
	pause  map[*plan.Task]int        // pauses asked
	ends   map[string]string         // how each trial ended
	copies map[*plan.Task]*plan.Task // the donor of each exploit, for the values it continues with
	wg     sync.WaitGroup
	stream sync.Mutex

	onPause func(t *plan.Task, n int) // a trial paused (pods share them)
	onEnd   func(name, how string)    // a trial ended (pods share them)
}

// value is trial t's value at step: its learning rate's ceiling, approached at its pace.
func value(v *plan.Task, step int) float64 {
	var lr float64
	for _, p := range v.Params {
		if p.Name == "lr" {
			lr, _ = strconv.ParseFloat(p.Value, 64)
		}
	}
	ceiling := 0.6 + 0.35*math.Exp(-math.Pow(math.Log10(lr)+2, 2))
	return ceiling * (1 - math.Exp(-lr*30*float64(step)))
}

// emit tells the consumer, and waits until it has handled what it was told: a trial's step
// takes longer than the consumer's reaction to it, as training does.
func (s *sweep) emit(ev event.Event) {
	s.stream.Lock()
	s.r.Event(ev, func(event.Event) {})
	s.stream.Unlock()
	for _, blk := range s.r.blocks {
		blk.in.settle()
	}
}

// start runs t from its checkpoint on a goroutine, once a slot is free.
func (s *sweep) start(t *plan.Task) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.slots <- struct{}{}
		defer func() { <-s.slots }()
		run, _ := s.r.Variant(t)
		s.mu.Lock()
		from := s.at[t]
		s.mu.Unlock()
		if s.t != nil {
			s.t.Logf("%p start %s from %d", s, t.Name, from)
		}
		for step := from + 1; step <= s.steps; step++ {
			s.emit(event.Event{Kind: event.TaskMetric, Task: t, Metric: "acc", Step: step, Value: value(run, step)})
			s.mu.Lock()
			s.at[t] = step
			n, paused := s.pause[t]
			s.mu.Unlock()
			if paused && step >= n {
				s.mu.Lock()
				delete(s.pause, t)
				s.mu.Unlock()
				if s.onPause != nil {
					s.onPause(t, n)
				}
				if s.t != nil {
					s.t.Logf("%p paused %s at %d", s, t.Name, step)
				}
				s.emit(event.Event{Kind: event.TaskEnded, Task: t, End: event.EndPause, Status: results.StatusPaused})
				return
			}
		}
		s.ended(t.Name, fmt.Sprintf("ok %.4f", value(run, s.steps)))
		s.emit(event.Event{Kind: event.TaskEnded, Task: t, End: event.EndFinal, Status: results.StatusOK})
	}()
}

func (s *sweep) PauseAt(t *plan.Task, n int, _ string, _ results.Status) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pause[t] = n
	return true
}

func (s *sweep) Resume(t *plan.Task, _ int) bool { s.start(t); return true }

func (s *sweep) ended(name, how string) {
	s.mu.Lock()
	s.ends[name] = how
	s.mu.Unlock()
	if s.onEnd != nil {
		s.onEnd(name, how)
	}
}

func (s *sweep) End(t *plan.Task, _ int, status results.Status, reason string) bool {
	s.ended(t.Name, string(status)+": "+reason)
	go s.emit(event.Event{Kind: event.TaskEnded, Task: t, End: event.EndFinal, Status: status})
	return true
}

func (s *sweep) Copy(_ context.Context, from, t *plan.Task, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at[t] = s.at[from]
	return nil
}

// Kept: the fake's trials pause at the step asked, never past it.
func (s *sweep) Kept(context.Context, *plan.Task, string) (int, map[int]float64) { return -1, nil }

// run runs the block's trials in order, slots at once, and waits for all of them to end.
func runSweep(t *testing.T, p *plan.Plan, order []*plan.Task, slots, steps int) map[string]string {
	t.Helper()
	s := &sweep{t: t, steps: steps, slots: make(chan struct{}, slots), at: map[*plan.Task]int{},
		pause: map[*plan.Task]int{}, ends: map[string]string{}}
	r, err := New(p, Options{Pauser: s})
	if err != nil || r == nil {
		t.Fatalf("New: %v %v", r, err)
	}
	s.r = r
	for _, tr := range order {
		s.start(tr)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		done := len(s.ends) == len(order)
		s.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			s.mu.Lock()
			t.Fatalf("the sweep did not end: %d of %d trials ended: %v", len(s.ends), len(order), s.ends)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.wg.Wait()
	r.Close()
	return maps.Clone(s.ends)
}

func loadRounds(t *testing.T, rule, trials string) *plan.Plan {
	t.Helper()
	file := "config:\n  objective: {metric: acc, mode: max}\ntasks:\n  - name: sweep\n    early-stop: " + rule +
		"\n    parallel-tasks:\n" + trials
	p := plantest.Load(t, file)
	return p
}

// TestSHAPausesAndResumes (issue 27, point 3): through the run's events, sha pauses every
// trial at each rung and resumes the best 1/reduction, whatever order they start in and
// however many run at once; the rest end as pruned with the rung's reason.
func TestSHAPausesAndResumes(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr> w=<w>', cmd: 'train <lr> <w>', checkpoint: 'ck/<lr>-<w>', matrix: {lr: [0.0001, 0.001, 0.01], w: [1, 2, 3]}}\n")
	trials := p.Tasks[0].Parallel
	reversed := slices.Clone(trials)
	slices.Reverse(reversed)
	var first map[string]string
	for _, tc := range []struct {
		order []*plan.Task
		slots int
	}{{trials, 4}, {reversed, 4}, {trials, 1}, {reversed, 9}} {
		got := runSweep(t, p, tc.order, tc.slots, 9)
		if first == nil {
			first = got
		} else if !maps.Equal(first, got) {
			t.Fatalf("%d at once: %v\nwant %v", tc.slots, got, first)
		}
	}
	ok, pruned := 0, 0
	for name, end := range first {
		switch {
		case strings.HasPrefix(end, "ok"):
			ok++
			if !strings.HasPrefix(name, "lr=0.01 ") {
				t.Errorf("%s ran to its end, want one of lr=0.01", name)
			}
		case strings.HasPrefix(end, "pruned: sha: acc"):
			pruned++
		default:
			t.Errorf("%s: %s", name, end)
		}
	}
	if ok != 1 || pruned != 8 {
		t.Errorf("%d ran to their end and %d were pruned, want 1 and 8: %v", ok, pruned, first)
	}
}

// TestPBTExploitsThroughTheRun (issue 27, point 4): through the run's events, pbt pauses the
// population every interval steps; the bottom quantile continue from a copy of a top
// trial's checkpoint with explored values (the command they run with changes through the
// placeholders), the same whatever the order; their lineage says from whom, when, with what.
func TestPBTExploitsThroughTheRun(t *testing.T) {
	p := loadRounds(t, "{method: pbt, interval: 3, max: 9, quantile: 0.25, perturb: [0.8, 1.25], resample: 0.25}",
		"      - {name: 'lr=<lr>', cmd: 'train --lr <lr>', checkpoint: 'ck/<lr>', matrix: {lr: [0.0001, 0.0003, 0.001, 0.002, 0.003, 0.005, 0.008, 0.01]}}\n")
	trials := p.Tasks[0].Parallel
	reversed := slices.Clone(trials)
	slices.Reverse(reversed)
	var first map[string]string
	for _, tc := range []struct {
		order []*plan.Task
		slots int
	}{{trials, 3}, {reversed, 8}, {trials, 1}} {
		got := runSweep(t, p, tc.order, tc.slots, 9)
		if first == nil {
			first = got
		} else if !maps.Equal(first, got) {
			t.Fatalf("%d at once: %v\nwant %v", tc.slots, got, first)
		}
	}
	// Replay the rule on a finished sweep's board for the lineage.
	s := &sweep{steps: 9, slots: make(chan struct{}, 8), at: map[*plan.Task]int{}, pause: map[*plan.Task]int{}, ends: map[string]string{}}
	r, _ := New(p, Options{Pauser: s})
	s.r = r
	for _, tr := range trials {
		s.start(tr)
	}
	for {
		s.mu.Lock()
		n := len(s.ends)
		s.mu.Unlock()
		if n == len(trials) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.wg.Wait()
	exploits := 0
	for _, tr := range trials {
		run, lineage := r.Variant(tr)
		for _, e := range lineage {
			exploits++
			if e.From == tr.Name || !strings.HasPrefix(e.From, "lr=0.00") && e.From != "lr=0.01" {
				t.Errorf("%s: continued from %q", tr.Name, e.From)
			}
			if e.Step != 3 && e.Step != 6 {
				t.Errorf("%s: exploit at step %d, want 3 or 6", tr.Name, e.Step)
			}
		}
		if len(lineage) > 0 && run.Cmd == tr.Cmd {
			t.Errorf("%s was exploited but runs %q as before", tr.Name, run.Cmd)
		}
		if len(lineage) == 0 && run.Cmd != tr.Cmd {
			t.Errorf("%s was never exploited but runs %q", tr.Name, run.Cmd)
		}
	}
	if exploits != 4 {
		t.Errorf("%d exploits, want 2 at each of steps 3 and 6", exploits)
	}
	r.Close()
}

// TestWrittenOrderFree (issue 27, point 3): the same trials written worst first and best
// first (two files: two plans, the block's identity differs) end the same under sha and
// hyperband, hyperband's brackets included.
func TestWrittenOrderFree(t *testing.T) {
	for _, rule := range []string{"{method: sha, grace: 1, reduction: 3, max: 9}", "{method: hyperband, grace: 1, reduction: 3, max: 9}"} {
		var first map[string]string
		for _, lrs := range []string{"0.0001, 0.0003, 0.001, 0.002, 0.003, 0.005, 0.008, 0.01, 0.03", "0.03, 0.01, 0.008, 0.005, 0.003, 0.002, 0.001, 0.0003, 0.0001"} {
			p := loadRounds(t, rule, "      - {name: 'lr=<lr>', cmd: 'train <lr>', checkpoint: 'ck/<lr>', matrix: {lr: ["+lrs+"]}}\n")
			got := runSweep(t, p, p.Tasks[0].Parallel, 3, 9)
			if first == nil {
				first = got
			} else if !maps.Equal(first, got) {
				t.Errorf("%s: written best first: %v\nworst first: %v", rule, got, first)
			}
		}
	}
}
