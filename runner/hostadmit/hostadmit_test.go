package hostadmit

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/needs"
)

const mib = 1 << 20

// box is a container whose memory a test sets: its use is what the trials' trees hold plus
// a base, as the kernel would charge it.
type box struct {
	mu       sync.Mutex
	limit    uint64
	base     uint64
	trees    map[int]uint64 // process group → what it holds
	oomKills uint64
	err      error
}

func (b *box) Read() (hostmem.Memory, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return hostmem.Memory{}, b.err
	}
	used := b.base
	for _, v := range b.trees {
		used += v
	}
	return hostmem.Memory{Limit: b.limit, Limited: true, Used: used, OOMKills: b.oomKills, HasOOMKills: true}, nil
}

func (b *box) Trees(roots []int) map[int]hostmem.Footprint {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[int]hostmem.Footprint{}
	for _, r := range roots {
		out[r] = hostmem.Footprint{PSS: b.trees[r], RSS: b.trees[r], Procs: 1}
	}
	return out
}

func (b *box) set(pgid int, held uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trees[pgid] = held
}

func (b *box) exit(pgid int, oomKilled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.trees, pgid)
	if oomKilled {
		b.oomKills++
	}
}

// clock is a test's time: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTest(limit uint64, retries int) (*Admitter, *box, *clock) {
	b := &box{limit: limit, base: 40 * mib, trees: map[int]uint64{}}
	c := &clock{now: time.Unix(1e9, 0)}
	a := New(Options{Memory: b, Trees: b.Trees, Now: c.Now, OOMRetries: retries,
		Margin: func(limit uint64) uint64 { return max(32*mib, limit/20) }})
	return a, b, c
}

// place admits req, failing the test unless it is admitted.
func place(t *testing.T, a *Admitter, req Request) *Placement {
	t.Helper()
	p, wait, err := a.Place(req)
	if err != nil || p == nil {
		t.Fatalf("%s: not admitted: %q, %v", req.Name, wait, err)
	}
	return p
}

// waits checks that req waits, saying want.
func waits(t *testing.T, a *Admitter, req Request, want string) {
	t.Helper()
	p, wait, err := a.Place(req)
	if p != nil || err != nil || !strings.Contains(wait, want) {
		t.Fatalf("%s: placement %v, wait %q, error %v; want it to wait saying %q", req.Name, p, wait, err, want)
	}
}

// TestReservation: trials launched together never count the same room twice: a trial that
// has not grown yet holds its need reserved, and less as its processes grow.
func TestReservation(t *testing.T) {
	a, b, c := newTest(1<<30, 2) // room: 1024 − 40 used − 51 margin = 933 MiB
	req := func(id int) Request { return Request{ID: id, Name: "t", Group: "g", Memory: 450 * mib} }
	p1 := place(t, a, req(1))
	a.Started(p1, 101)
	p2 := place(t, a, req(2))
	a.Started(p2, 102)
	waits(t, a, req(3), "needs 450 MiB of host memory; the container has 33 MiB free of 1.0 GiB (in use 40 MiB, 900 MiB reserved for trials still growing, 51 MiB margin)")
	// They grow to their need: the reservation becomes use, and the room stays what it was.
	b.set(101, 450*mib)
	b.set(102, 450*mib)
	c.advance(time.Second)
	waits(t, a, req(3), "the container has 33 MiB free of 1.0 GiB (in use 940 MiB, 51 MiB margin)")
	b.exit(101, false)
	a.Release(p1)
	c.advance(time.Second)
	place(t, a, req(3))
}

// TestUnderDeclaredGrowth: a trial that grows beyond its need takes room from the others,
// measured: the waiting line sees its real use.
func TestUnderDeclaredGrowth(t *testing.T) {
	a, b, c := newTest(1<<30, 2)
	p1 := place(t, a, Request{ID: 1, Name: "liar", Memory: 100 * mib})
	a.Started(p1, 101)
	b.set(101, 600*mib)
	c.advance(time.Second)
	waits(t, a, Request{ID: 2, Name: "next", Memory: 400 * mib}, "needs 400 MiB")
	place(t, a, Request{ID: 3, Name: "small", Memory: 300 * mib})
}

func TestNeverFits(t *testing.T) {
	a, _, _ := newTest(1<<30, 2)
	_, _, err := a.Place(Request{ID: 1, Name: "huge", Memory: 2 << 30})
	if !errors.Is(err, ErrNeverFits) || !strings.Contains(err.Error(), "needs 2.0 GiB, the container's memory limit is 1.0 GiB (973 MiB after the 51 MiB margin)") {
		t.Fatalf("error %v", err)
	}
}

// TestAuto: the group's first trial learns its need alone; the rest wait for it, then start
// at the learned need, which the next run starts with.
func TestAuto(t *testing.T) {
	a, b, c := newTest(1<<30, 2)
	store := &memoryNeeds{m: map[string]uint64{}}
	a.book = needs.New(HostPolicy(2), store)
	req := func(id int) Request { return Request{ID: id, Name: "trial", Group: "sweep", Auto: true} }
	learner := place(t, a, req(1))
	a.Started(learner, 101)
	waits(t, a, req(2), `waits for "trial" to measure the group's host memory`)
	place(t, a, Request{ID: 9, Name: "other group", Group: "x", Memory: 100 * mib}) // beside its provisional 256 MiB
	for _, held := range []uint64{100 * mib, 300 * mib, 410 * mib} {
		b.set(101, held)
		c.advance(sampleEvery)
		a.mu.Lock()
		a.sampleLocked()
		a.mu.Unlock()
	}
	b.exit(101, false)
	a.Release(learner)
	if n, ok := store.Learned("sweep"); !ok || n != 448*mib { // 410 + 5%, in 64 MiB steps
		t.Fatalf("learned %d MiB (%v), want 448", n/mib, ok)
	}
	p := place(t, a, req(2))
	if p.Need != 448*mib {
		t.Errorf("admitted with %d MiB, want the learned 448", p.Need/mib)
	}

	// A new run: the need is known from the start.
	a2, _, _ := newTest(1<<30, 2)
	a2.book = needs.New(HostPolicy(2), store)
	if p := place(t, a2, req(1)); p.Need != 448*mib || p.entry.Learning() {
		t.Errorf("next run: need %d MiB, learning %v", p.Need/mib, p.entry.Learning())
	}
}

// TestLearnsWhenSettled: a long trial teaches its group once its memory stopped growing.
func TestLearnsWhenSettled(t *testing.T) {
	a, b, c := newTest(4<<30, 2)
	learner := place(t, a, Request{ID: 1, Name: "long", Group: "g", Auto: true})
	a.Started(learner, 101)
	b.set(101, 500*mib)
	for range 3 {
		c.advance(learnSettle / 2)
		a.mu.Lock()
		a.sampleLocked()
		a.mu.Unlock()
	}
	p := place(t, a, Request{ID: 2, Name: "next", Group: "g", Auto: true})
	if p.Need != 576*mib {
		t.Errorf("need %d MiB, want 576 (500 + 5%%, in 64 MiB steps)", p.Need/mib)
	}
}

// TestOOMKill: a trial that died of SIGKILL while the cgroup's counter rose was the OOM
// killer's; one that died of SIGKILL with no kill counted was not.
func TestOOMKill(t *testing.T) {
	a, b, c := newTest(1<<30, 2)
	p1 := place(t, a, Request{ID: 1, Name: "a", Group: "g", Memory: 100 * mib})
	a.Started(p1, 101)
	p2 := place(t, a, Request{ID: 2, Name: "b", Group: "g", Memory: 100 * mib})
	a.Started(p2, 102)
	b.set(101, 500*mib)
	b.set(102, 400*mib)
	c.advance(sampleEvery)
	a.mu.Lock()
	a.sampleLocked()
	a.mu.Unlock()

	b.exit(102, false) // someone's kill -9: no OOM kill counted
	if r, ok := a.OOMKilled(p2, true); ok {
		t.Errorf("a SIGKILL with no OOM kill counted taken for one: %q", r)
	}
	b.exit(101, true)
	if _, ok := a.OOMKilled(p1, false); ok {
		t.Errorf("an exit that was no SIGKILL taken for an OOM kill")
	}
	r, ok := a.OOMKilled(p1, true)
	if want := "killed by the kernel's OOM killer: the container's memory limit is 1.0 GiB, in use 940 MiB"; !ok || r != want {
		t.Fatalf("OOMKilled = %q, %v; want %q", r, ok, want)
	}
	need, n, err := a.Requeue(p1)
	if err != nil || n != 1 || need != 768*mib { // 500 + 50%, in 64 MiB steps
		t.Fatalf("Requeue = %d MiB, %d, %v; want 768 MiB, 1", need/mib, n, err)
	}
	a.Release(p1)
	a.Release(p2)
	// Its sibling learns from it: the group's peak is its need now.
	p3 := place(t, a, Request{ID: 3, Name: "c", Group: "g", Memory: 100 * mib})
	if p3.Need != 576*mib {
		t.Errorf("a sibling's need %d MiB, want 576", p3.Need/mib)
	}
	a.Release(p3)
	if p := place(t, a, Request{ID: 1, Name: "a", Group: "g", Memory: 100 * mib}); p.Need != 768*mib {
		t.Errorf("the requeued trial's need %d MiB, want 768", p.Need/mib)
	}
}

// TestOOMRetries: an under-declaring trial goes again within oom-retries, then fails saying
// so; an honest one killed for its neighbour's excess is not charged.
func TestOOMRetries(t *testing.T) {
	a, b, c := newTest(4<<30, 1)
	kill := func(p *Placement, pgid int, held uint64) {
		a.Started(p, pgid)
		b.set(pgid, held)
		c.advance(sampleEvery)
		a.mu.Lock()
		a.sampleLocked()
		a.mu.Unlock()
		b.exit(pgid, true)
	}
	req := Request{ID: 1, Name: "liar", Memory: 100 * mib}
	p := place(t, a, req)
	kill(p, 101, 300*mib)
	if _, _, err := a.Requeue(p); err != nil {
		t.Fatal(err)
	}
	a.Release(p)
	p = place(t, a, req)
	kill(p, 102, 900*mib)
	_, _, err := a.Requeue(p)
	if err == nil || !strings.Contains(err.Error(), "killed by the OOM killer 2 times (oom-retries: 1); it held 900 MiB when killed") {
		t.Fatalf("error %v", err)
	}
	a.Release(p)

	honest := Request{ID: 2, Name: "honest", Memory: 500 * mib}
	for i := range victimRetries {
		p := place(t, a, honest)
		kill(p, 200+i, 400*mib)
		if need, _, err := a.Requeue(p); err != nil || need != 512*mib {
			t.Fatalf("victim %d: need %d MiB, %v; want 512 MiB (its own, rounded)", i, need/mib, err)
		}
		a.Release(p)
	}
	p = place(t, a, honest)
	kill(p, 299, 400*mib)
	if _, _, err := a.Requeue(p); err == nil || !strings.Contains(err.Error(), "other trials use more host memory than they declared") {
		t.Fatalf("error %v", err)
	}
}

// TestKilledBeyondTheLimit: a trial killed holding more than the limit gives can never run.
func TestKilledBeyondTheLimit(t *testing.T) {
	a, b, c := newTest(1<<30, 3)
	p := place(t, a, Request{ID: 1, Name: "big", Memory: 100 * mib})
	a.Started(p, 101)
	b.set(101, 1000*mib)
	c.advance(sampleEvery)
	a.mu.Lock()
	a.sampleLocked()
	a.mu.Unlock()
	if _, _, err := a.Requeue(p); !errors.Is(err, ErrNeverFits) {
		t.Fatalf("error %v, want ErrNeverFits", err)
	}
}

// TestUnreadable: a container whose memory cannot be read admits everything, saying so once.
func TestUnreadable(t *testing.T) {
	a, b, _ := newTest(1<<30, 2)
	b.err = errors.New("cannot read the container's memory: memory.max: permission denied")
	if w := a.Warning(); !strings.Contains(w, "permission denied: trials are admitted without regard to host memory") {
		t.Errorf("warning %q", w)
	}
	if w := a.Warning(); w != "" {
		t.Errorf("warned twice: %q", w)
	}
	for i := range 5 {
		place(t, a, Request{ID: i, Name: "t", Memory: 900 * mib})
	}
}

// TestStartStop: the sampler reports each running trial's memory, and stops.
func TestStartStop(t *testing.T) {
	a, b, _ := newTest(1<<30, 2)
	a.now = time.Now
	p := place(t, a, Request{ID: 7, Name: "t", Memory: 100 * mib})
	a.Started(p, 101)
	b.set(101, 50*mib)
	got := make(chan []TrialMemory, 100)
	a.Start(t.Context(), func(tm []TrialMemory) { got <- tm })
	defer a.Stop()
	select {
	case tm := <-got:
		if len(tm) != 1 || tm[0].ID != 7 || tm[0].Memory != 50*mib || tm[0].Peak != 50*mib {
			t.Errorf("sample %+v", tm)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no sample")
	}
}

// TestReleaseUnstarted: a placement given back before its trial started (the GPU had no
// room) wakes no waiting trial, or the scheduler would try again at once, for ever; one whose
// trial ran does.
func TestReleaseUnstarted(t *testing.T) {
	a, _, _ := newTest(1<<30, 2)
	p := place(t, a, Request{ID: 1, Name: "t", Memory: 100 * mib})
	changed := a.Changed()
	a.Release(p)
	select {
	case <-changed:
		t.Fatal("releasing a placement that never started woke the waiting trials")
	default:
	}
	p = place(t, a, Request{ID: 1, Name: "t", Memory: 100 * mib})
	a.Started(p, 101)
	changed = a.Changed()
	a.Release(p)
	select {
	case <-changed:
	default:
		t.Fatal("a trial's end did not wake the waiting trials")
	}
}
