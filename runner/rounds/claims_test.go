package rounds

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/s3sync"
)

// pod is one runall of a shared sweep in the fake: its own consumer and slots; paused
// trials are shared (a trial paused on one pod may be resumed on another, once).
type pod struct {
	*sweep
	shared *shared
}

// shared is what the pods of a sweep share: the paused trials, and how each trial ended.
type shared struct {
	mu     sync.Mutex
	paused map[*plan.Task]int // the step each paused trial is paused at
	pods   []*pod
	next   int
}

func (p *pod) PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool {
	return p.sweep.PauseAt(t, n, reason, otherwise)
}

// Resume starts t on the next pod in turn, once: a resume asked again, or of a trial
// paused at another step, is a no-op, as the claims make it.
func (p *pod) Resume(t *plan.Task, n int) bool {
	s := p.shared
	s.mu.Lock()
	if at, ok := s.paused[t]; !ok || at != n {
		s.mu.Unlock()
		return false
	}
	delete(s.paused, t)
	on := s.pods[s.next%len(s.pods)]
	s.next++
	s.mu.Unlock()
	on.start(t)
	return true
}

func (p *pod) End(t *plan.Task, n int, status results.Status, reason string) bool {
	s := p.shared
	s.mu.Lock()
	if at, ok := s.paused[t]; !ok || at != n {
		s.mu.Unlock()
		return false
	}
	delete(s.paused, t)
	s.mu.Unlock()
	return p.sweep.End(t, n, status, reason)
}

func (p *pod) Copy(ctx context.Context, from, t *plan.Task, n int) error {
	for _, q := range p.shared.pods { // the checkpoint is where every pod reaches it
		q.mu.Lock()
		at, ok := q.at[from]
		q.mu.Unlock()
		if ok {
			for _, r := range p.shared.pods {
				r.mu.Lock()
				r.at[t] = at
				r.mu.Unlock()
			}
		}
	}
	return nil
}

// TestSHAAcrossRunalls (issue 27, point 3): two runalls share a sweep's board (the claims
// prefix): each runs some trials, a trial paused on one is resumed on whichever the other
// picks, and every decision is the one a single runall makes.
func TestSHAAcrossRunalls(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr> w=<w>', cmd: 'train <lr> <w>', checkpoint: 'ck/<lr>-<w>', matrix: {lr: [0.0001, 0.001, 0.01], w: [1, 2, 3]}}\n")
	trials := p.Tasks[0].Parallel
	alone := runSweep(t, p, trials, 4, 9)

	store := claimstest.NewMem()
	sh := &shared{paused: map[*plan.Task]int{}}
	ends := map[string]string{}
	var endsMu sync.Mutex
	for range 2 {
		s := &sweep{t: t, steps: 9, slots: make(chan struct{}, 2), at: map[*plan.Task]int{},
			pause: map[*plan.Task]int{}, ends: map[string]string{}}
		pd := &pod{sweep: s, shared: sh}
		r, err := New(p, Options{Pauser: pd, Poll: 5 * time.Millisecond,
			Board: func(*plan.Task, func(string)) (Board, error) { return claims.NewBoard(store, "sweep") }})
		if err != nil {
			t.Fatal(err)
		}
		s.r = r
		s.onPause = func(t *plan.Task, n int) {
			sh.mu.Lock()
			sh.paused[t] = n
			sh.mu.Unlock()
		}
		s.onEnd = func(name, how string) {
			endsMu.Lock()
			ends[name] = how
			endsMu.Unlock()
		}
		sh.pods = append(sh.pods, pd)
	}
	for i, tr := range trials {
		sh.pods[i%2].start(tr)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		endsMu.Lock()
		n := len(ends)
		endsMu.Unlock()
		if n == len(trials) {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("the sweep did not end: %v\n%s", ends, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, pd := range sh.pods {
		pd.wg.Wait()
		pd.r.Close()
	}
	if !maps.Equal(alone, ends) {
		t.Errorf("two runalls: %v\none runall: %v", ends, alone)
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(ends)), func(s string) bool { return strings.HasPrefix(s, "ok") }) {
		t.Errorf("no trial ran to its end: %v", ends)
	}
}

// TestTakenOverWhilePaused (issue 27, point 3): a runall died while two of its trials were
// paused at a round the third had not reached; another took the sweep over and started one
// of them again. It pauses that one at once (its value at the round is on the board), and
// once the third reaches the round, carries out the decision: the best runs on, the rest
// are pruned; none runs past its round before.
func TestTakenOverWhilePaused(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr>', cmd: 'train <lr>', checkpoint: 'ck/<lr>', matrix: {lr: [0.0001, 0.001, 0.01]}}\n")
	trials := p.Tasks[0].Parallel
	a, b, c := trials[0], trials[1], trials[2]
	store := claimstest.NewMem()
	dead, _ := claims.NewBoard(store, "sweep")
	for _, tr := range []*plan.Task{a, b} {
		if err := dead.Value(context.Background(), 1, tr.Key, value(tr, 1)); err != nil {
			t.Fatal(err)
		}
	}
	s := &sweep{t: t, steps: 9, slots: make(chan struct{}, 3), at: map[*plan.Task]int{a: 1, b: 1},
		pause: map[*plan.Task]int{}, ends: map[string]string{}}
	r, err := New(p, Options{Pauser: s, Board: func(*plan.Task, func(string)) (Board, error) { return claims.NewBoard(store, "sweep") }})
	if err != nil {
		t.Fatal(err)
	}
	s.r = r
	s.start(a) // taken over: its checkpoint holds step 1
	s.start(c)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.ends)
		s.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep did not end: %v", s.ends)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.wg.Wait()
	r.Close()
	if !strings.HasPrefix(s.ends[c.Name], "ok") || !strings.HasPrefix(s.ends[a.Name], "pruned: sha") || !strings.HasPrefix(s.ends[b.Name], "pruned: sha") {
		t.Errorf("ends %v, want lr=0.01 to run on and the others pruned at step 1", s.ends)
	}
}

// TestUnreadBoardValueSaidByBlock: a value on a shared board that cannot be read is said
// through the block's notes (the stream tells them; a line emitted from the block's
// goroutine could wait on the stream that waits for the block), and its round waits.
func TestUnreadBoardValueSaidByBlock(t *testing.T) {
	p := loadRounds(t, "{method: sha, grace: 1, reduction: 3, max: 9}",
		"      - {name: 'lr=<lr>', cmd: 'train <lr>', checkpoint: 'ck/<lr>', matrix: {lr: [0.001, 0.01]}}\n")
	trials := p.Tasks[0].Parallel
	store := claimstest.NewMem()
	if _, err := store.Put(context.Background(), "rounds/sweep/1/"+trials[1].Key+".json", []byte(`{"val`), s3sync.Condition{}); err != nil {
		t.Fatal(err)
	}
	pauser := &pausesAsked{asked: map[string]int{}}
	r, err := New(p, Options{Pauser: pauser, Board: func(_ *plan.Task, say func(string)) (Board, error) {
		b, err := claims.NewBoard(store, "sweep")
		if err == nil {
			b.OnUnread(say)
		}
		return b, err
	}})
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
	s.Emit(event.Event{Kind: event.TaskMetric, Task: trials[0], Metric: "acc", Step: 1, Value: 0.5})
	s.Emit(event.Event{Kind: event.RunEnded})
	all := strings.Join(said, "\n")
	if strings.Count(all, "cannot be read") != 1 || !strings.Contains(all, "trial "+trials[1].Key+" at step 1") || !strings.Contains(all, "its round waits for it") {
		t.Errorf("said %q, want %s's value said once", said, trials[1].Key)
	}
}
