package rounds

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// gatedBoard is a board in memory that answers no read until open is closed: a remote
// board that stalls.
type gatedBoard struct {
	*memBoard
	open chan struct{}
}

func (g *gatedBoard) Load(ctx context.Context) (map[int]map[string]float64, map[string]bool, map[string]bool, error) {
	<-g.open
	return g.memBoard.Load(ctx)
}

// pausesAsked is a Pauser that grants every pause and acts on nothing.
type pausesAsked struct {
	mu    sync.Mutex
	asked map[string]int
}

func (p *pausesAsked) PauseAt(t *plan.Task, n int, _ string, _ results.Status) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[t.Name] = n
	return true
}
func (p *pausesAsked) Resume(*plan.Task, int) bool                             { return true }
func (p *pausesAsked) End(*plan.Task, int, results.Status, string) bool        { return true }
func (p *pausesAsked) Copy(context.Context, *plan.Task, *plan.Task, int) error { return nil }
func (p *pausesAsked) Kept(context.Context, *plan.Task, string) (int, map[int]float64) {
	return -1, nil
}

// TestStalledBoardStaysBounded: a block whose board does not answer holds its trials'
// values in a bounded inbox however many they report (a trial's newest value replaces its
// one still queued past the bound), loses none of their ends, and says what it replaced.
func TestStalledBoardStaysBounded(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr>', cmd: 'train <lr>', checkpoint: 'ck/<lr>', matrix: {lr: [0.001, 0.01, 0.1]}}\n")
	trials := p.Tasks[0].Parallel
	board := &gatedBoard{memBoard: newMemBoard(), open: make(chan struct{})}
	r, err := New(p, Options{Pauser: &pausesAsked{asked: map[string]int{}}, Board: func(*plan.Task, func(string)) (Board, error) { return board, nil }})
	if err != nil || r == nil {
		t.Fatalf("New: %v %v", r, err)
	}
	var said []string
	var s event.Stream
	s.Add(r)
	s.Add(event.Func(func(ev event.Event, _ func(event.Event)) {
		if ev.Kind == event.RunStatus {
			said = append(said, ev.Line)
		}
	}))
	const steps = 10000
	for step := 1; step <= steps; step++ {
		for _, tr := range trials {
			s.Emit(event.Event{Kind: event.TaskMetric, Task: tr, Metric: "acc", Step: step, Value: 0.5})
		}
	}
	for _, tr := range trials {
		s.Emit(event.Event{Kind: event.TaskEnded, Task: tr, End: event.EndFinal, Status: results.StatusOK})
	}
	in := r.blocks[p.Tasks[0].EarlyStop].in
	if n, bound := in.q.Len(), 4096+2*len(trials); n > bound {
		t.Errorf("%d events queued for a stalled board after %d values, want at most %d", n, steps*len(trials), bound)
	}
	close(board.open)
	s.Emit(event.Event{Kind: event.RunEnded})
	_, ended, _, _ := board.Load(context.Background())
	for _, tr := range trials {
		if !ended[tr.Key] {
			t.Errorf("%s's end lost: the board has %v ended", tr.Name, ended)
		}
	}
	replaced := false
	for _, l := range said {
		replaced = replaced || strings.Contains(l, "values were replaced by their trial's newer one before the rule took them")
	}
	if !replaced {
		t.Errorf("said %q, want the values replaced", said)
	}
}

// TestRunEndBoundedWhenBoardStalls: the run's end waits for a block whose board does not
// answer only as long as Drain, and says so, as early stopping's end does.
func TestRunEndBoundedWhenBoardStalls(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr>', cmd: 'train <lr>', checkpoint: 'ck/<lr>', matrix: {lr: [0.001, 0.01, 0.1]}}\n")
	trials := p.Tasks[0].Parallel
	board := &gatedBoard{memBoard: newMemBoard(), open: make(chan struct{})}
	r, err := New(p, Options{Pauser: &pausesAsked{asked: map[string]int{}}, Drain: 10 * time.Millisecond,
		Board: func(*plan.Task, func(string)) (Board, error) { return board, nil }})
	if err != nil || r == nil {
		t.Fatalf("New: %v %v", r, err)
	}
	defer r.Close()
	defer close(board.open)
	var said []string
	var s event.Stream
	s.Add(r)
	s.Add(event.Func(func(ev event.Event, _ func(event.Event)) {
		if ev.Kind == event.RunStatus {
			said = append(said, ev.Line)
		}
	}))
	s.Emit(event.Event{Kind: event.TaskMetric, Task: trials[0], Metric: "acc", Step: 1, Value: 0.5})
	s.Emit(event.Event{Kind: event.RunEnded})
	if len(said) != 1 || !strings.Contains(said[0], "after 10ms (their board does not answer): the other runalls of the sweep will not see them") {
		t.Errorf("said %q at the run's end, want the wait's bound", said)
	}
}
