package admit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/needs"
	"github.com/runall/runall/runner/proc"
)

const gi = 1 << 30

// fakeProbe is a set of devices whose use a test sets by hand: memory held by no listed
// process (others), and processes.
type fakeProbe struct {
	mu     sync.Mutex
	devs   []gpu.Device
	others []uint64
	procs  []gpu.Process
	procOn []int // the device of each process
}

func newFakeProbe(totals ...uint64) *fakeProbe {
	p := &fakeProbe{others: make([]uint64, len(totals))}
	for i, t := range totals {
		p.devs = append(p.devs, gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Total: t, Free: t})
	}
	return p
}

// use sets what is in use on device i by no process the probe lists.
func (p *fakeProbe) use(i int, used uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.others[i] = used
}

// run starts or resizes process pid on device dev; local says whether its PID is one of
// this pid namespace's.
func (p *fakeProbe) run(pid uint32, dev int, mem uint64, local bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, q := range p.procs {
		if q.PID == pid && p.procOn[k] == dev {
			p.procs[k].UsedMemory = mem
			return
		}
	}
	p.procs = append(p.procs, gpu.Process{PID: pid, UsedMemory: mem, Local: local})
	p.procOn = append(p.procOn, dev)
}

// exit ends process pid on every device.
func (p *fakeProbe) exit(pid uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := len(p.procs) - 1; k >= 0; k-- {
		if p.procs[k].PID == pid {
			p.procs = slices.Delete(p.procs, k, k+1)
			p.procOn = slices.Delete(p.procOn, k, k+1)
		}
	}
}

func (p *fakeProbe) Devices() ([]gpu.Device, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.devs)
	for i := range out {
		used := p.others[i]
		for k, q := range p.procs {
			if p.procOn[k] == i {
				used += q.UsedMemory
			}
		}
		out[i].Used, out[i].Free = used, sub(out[i].Total, used)
	}
	return out, nil
}

func (p *fakeProbe) Processes(i int) ([]gpu.Process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []gpu.Process
	for k, q := range p.procs {
		if p.procOn[k] == i {
			out = append(out, q)
		}
	}
	return out, nil
}

func (p *fakeProbe) Env(ix []int) []string { return []string{fmt.Sprint("CUDA_VISIBLE_DEVICES=", ix)} }
func (p *fakeProbe) Close() error          { return nil }

// The admitter reads no utilisation: a device that reports none.
func (p *fakeProbe) Utilization(int) (gpu.Utilization, error) { return gpu.Utilization{}, nil }
func (p *fakeProbe) Health(int) (gpu.Health, error)           { return gpu.Health{}, nil }
func (p *fakeProbe) ProcessUtilization(int) ([]gpu.ProcessUtilization, error) {
	return nil, nil
}

// world is a fake probe, the process tree its processes stand in, and a clock.
type world struct {
	*fakeProbe
	a     *Admitter
	hist  memNeeds // the learned needs
	clock time.Time
	tree  map[int]proc.Lineage
}

func newWorld(totals ...uint64) *world {
	w := &world{fakeProbe: newFakeProbe(totals...), clock: time.Unix(1000, 0), tree: map[int]proc.Lineage{}, hist: memNeeds{}}
	w.a = New(Options{Probe: w.fakeProbe, Margin: defaultMargin, OOMRetries: 2, History: w.hist,
		Now:     func() time.Time { return w.clock },
		Lineage: func(pid int) (proc.Lineage, bool) { l, ok := w.tree[pid]; return l, ok },
	})
	return w
}

// tick moves the clock and takes a sample, as the admitter's sampler would.
func (w *world) tick(d time.Duration) {
	w.clock = w.clock.Add(d)
	measure(w.a)
}

// start launches a placement's attempt as process group pgid, and a GPU process pid of it
// on each of its devices holding mem; local: the driver reports PIDs of this namespace.
func (w *world) start(p *Placement, pgid int, pid uint32, mem uint64, local bool) {
	w.a.Started(p, pgid)
	w.tree[int(pid)] = proc.Lineage{PGID: pgid}
	for _, d := range p.Devices {
		w.run(pid, d, mem, local)
	}
}

// newTestAdmitter is an admitter over probe with the default margin (5%, at least 256 MiB)
// that already knows the driver reports no processes: trials' memory is estimated from the
// devices' growth, as before per-process figures.
func newTestAdmitter(probe gpu.Probe) *Admitter {
	a := New(Options{Probe: probe, Margin: defaultMargin, OOMRetries: 2})
	a.meter.pids = PIDsNone
	return a
}

// place asks for a fresh measurement first: the tests change use between calls faster than
// the admitter's 100 ms sampling would notice.
func place(a *Admitter, req Request) (*Placement, string, error) {
	measure(a)
	return a.Place(req)
}

// measure takes a sample now, as the admitter's sampler does every 250 ms.
func measure(a *Admitter) {
	a.mu.Lock()
	a.sampleLocked()
	a.mu.Unlock()
}

func mem(id int, need uint64) Request {
	return Request{Request: needs.Request{ID: id, Name: fmt.Sprint("t", id), Memory: need}}
}

// TestReservations walks one 32 GiB device through placements and measured use, with no
// per-process figures (the device's growth is all there is). The margin there is 1.6 GiB.
// A trial placed but not yet allocated reserves its whole need; as the device's use grows
// the reservation shrinks by as much, so nothing is counted twice.
func TestReservations(t *testing.T) {
	type step struct {
		used    uint64 // device use measured before the step
		req     Request
		wantDev int // -1: waits
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a second trial counts the first one's reservation", []step{
			{0, mem(1, 10*gi), 0},
			{0, mem(2, 10*gi), 0},  // 32 - 10 reserved - 1.6 = 20.4 free for it
			{0, mem(3, 12*gi), -1}, // 32 - 20 reserved - 1.6 = 10.4: too little
		}},
		{"use that shows up releases the reservation", []step{
			{0, mem(1, 10*gi), 0},
			{0, mem(2, 10*gi), 0},
			{20 * gi, mem(3, 10*gi), 0}, // both allocated: 12 free, nothing reserved
		}},
		{"use partly shown keeps the rest reserved", []step{
			{0, mem(1, 10*gi), 0},
			{0, mem(2, 10*gi), 0},
			{5 * gi, mem(3, 11*gi), -1}, // 27 free, 15 reserved, 1.6 margin
			{5 * gi, mem(4, 10*gi), 0},  // 27 - 15 - 1.6 = 10.4
		}},
		{"the margin is kept free", []step{
			{0, mem(1, 30*gi), 0},
			{30 * gi, mem(2, 512<<20), -1}, // 2 GiB free, 1.6 GiB of it margin
			{30 * gi, mem(3, 256<<20), 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := newFakeProbe(32 * gi)
			a := newTestAdmitter(probe)
			for i, s := range tc.steps {
				probe.use(0, s.used)
				p, why, err := place(a, s.req)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				switch {
				case s.wantDev < 0 && p != nil:
					t.Fatalf("step %d: placed on %v, want it to wait", i, p.Devices)
				case s.wantDev >= 0 && p == nil:
					t.Fatalf("step %d: waits (%s), want it placed", i, why)
				case p != nil && p.Devices[0] != s.wantDev:
					t.Fatalf("step %d: placed on %v, want GPU%d", i, p.Devices, s.wantDev)
				}
			}
		})
	}
}

// TestBestFit places a trial where it leaves the least room, so that big gaps stay for big
// trials; a trial for several devices gets the tightest ones that fit.
func TestBestFit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		used    []uint64 // per device, of 32 GiB each
		req     Request
		wantDev []int
	}{
		{"the fuller device that fits", []uint64{0, 20 * gi, 4 * gi}, mem(1, 8*gi), []int{1}},
		{"not one too full", []uint64{0, 25 * gi, 4 * gi}, mem(1, 8*gi), []int{2}},
		{"two devices, the tightest two", []uint64{0, 20 * gi, 10 * gi, 27 * gi},
			Request{Request: needs.Request{ID: 1, Memory: 8 * gi}, Devices: 2}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			totals := make([]uint64, len(tc.used))
			for i := range totals {
				totals[i] = 32 * gi
			}
			probe := newFakeProbe(totals...)
			for i, u := range tc.used {
				probe.use(i, u)
			}
			p, why, err := place(newTestAdmitter(probe), tc.req)
			if err != nil || p == nil {
				t.Fatalf("not placed: %v %s", err, why)
			}
			if fmt.Sprint(p.Devices) != fmt.Sprint(tc.wantDev) {
				t.Errorf("placed on %v, want %v", p.Devices, tc.wantDev)
			}
		})
	}
}

// TestNeverFits fails a trial that no device could hold even empty, with the sizes, and
// one for more devices than there are.
func TestNeverFits(t *testing.T) {
	a := newTestAdmitter(newFakeProbe(16*gi, 16*gi))
	_, _, err := place(a, mem(1, 15*gi+512<<20)) // 16 GiB less the 819 MiB margin is less
	if !errors.Is(err, ErrNeverFits) || !strings.Contains(err.Error(), "the largest GPU has 16.0 GiB") {
		t.Errorf("err = %v, want ErrNeverFits naming the largest GPU", err)
	}
	if _, _, err := place(a, mem(2, 15*gi)); err != nil {
		t.Errorf("15 GiB on 16 GiB: %v", err)
	}
	if _, _, err := place(a, Request{Request: needs.Request{ID: 3, Memory: gi}, Devices: 3}); err == nil || !strings.Contains(err.Error(), "2 are visible") {
		t.Errorf("3 GPUs of 2: err = %v", err)
	}
}

// TestLearningAlone: without per-process figures, the first trial of a gpu-memory: auto
// group runs alone on a device, its siblings wait for it, and its peak (padded) becomes the
// group's need, kept in the history.
func TestLearningAlone(t *testing.T) {
	probe := newFakeProbe(32*gi, 32*gi)
	hist := memNeeds{}
	a := New(Options{Probe: probe, Margin: defaultMargin, History: hist})
	a.meter.pids = PIDsNone
	auto := func(id int) Request {
		return Request{Request: needs.Request{ID: id, Name: fmt.Sprint("t", id), Group: "g", Auto: true}}
	}

	other, _, _ := place(a, mem(9, 4*gi)) // another trial on GPU0 (best fit takes the first)
	if other == nil || other.Devices[0] != 0 {
		t.Fatalf("other trial: %+v", other)
	}
	learner, why, err := place(a, auto(1))
	if err != nil || learner == nil {
		t.Fatalf("learner not placed: %v %s", err, why)
	}
	if learner.Devices[0] != 1 || learner.Need != 0 {
		t.Errorf("learner on %v with need %d, want alone on GPU1 with need 0", learner.Devices, learner.Need)
	}
	if p, why, _ := place(a, auto(2)); p != nil || !strings.Contains(why, `waits for "t1"`) {
		t.Errorf("sibling: placed %v, reason %q; want it to wait for the learner", p, why)
	}
	if p, why, _ := place(a, mem(3, gi)); p == nil || p.Devices[0] != 0 {
		t.Errorf("a 1 GiB trial beside the learner: %v %q; want GPU0, GPU1 is the learner's alone", p, why)
	}
	probe.use(1, 6*gi)
	measure(a)
	a.Release(learner) // ends before its memory settled: learned from its end
	got, ok := hist.Learned("g")
	if want := learnedNeed(6 * gi); !ok || got != want {
		t.Fatalf("learned %d (%v), want %d", got, ok, want)
	}
	if got < 6*gi+6*gi/20 {
		t.Errorf("learned need %d is not padded above the 6 GiB peak", got)
	}
	probe.use(1, 0)
	p, why, _ := place(a, auto(2))
	if p == nil || p.Need != got {
		t.Errorf("sibling after learning: %+v %q; want need %d", p, why, got)
	}
}

// TestLearningNeedsAnEmptyDevice: without per-process figures and a trial on every device,
// the learner waits.
func TestLearningNeedsAnEmptyDevice(t *testing.T) {
	a := newTestAdmitter(newFakeProbe(32*gi, 32*gi))
	for id := range 2 {
		if p, why, _ := place(a, mem(id, 20*gi)); p == nil || p.Devices[0] != id {
			t.Fatalf("trial %d: %+v %s", id, p, why)
		}
	}
	p, why, _ := place(a, Request{Request: needs.Request{ID: 3, Group: "g", Auto: true}})
	if p != nil || !strings.Contains(why, "learning its GPU memory") {
		t.Errorf("learner placed %v (%q), want it to wait for an empty GPU", p, why)
	}
}

// TestLearningBesideOthers: where each trial's memory is its processes', learners of
// several groups run at once beside other trials, each on a provisional reservation (a
// quarter of the device), and each learns its own need, not the device's.
func TestLearningBesideOthers(t *testing.T) {
	w := newWorld(32 * gi)
	hist := w.hist
	other, _, _ := place(w.a, mem(9, 4*gi))
	w.start(other, 900, 901, 4*gi, true)
	w.tick(100 * time.Millisecond)
	if got := w.a.PIDs(); got != PIDsHere {
		t.Fatalf("PIDs %v after a trial's own process showed", got)
	}
	var learners []*Placement
	for g := range 3 {
		p, why, _ := place(w.a, Request{Request: needs.Request{ID: g + 1, Name: fmt.Sprint("g", g), Group: fmt.Sprint("g", g), Auto: true}})
		if p == nil {
			t.Fatalf("learner of group %d waits: %s", g, why)
		}
		learners = append(learners, p)
		w.start(p, 100*(g+1), uint32(100*(g+1)+1), 0, true)
	}
	if p, why, _ := place(w.a, Request{Request: needs.Request{ID: 9, Name: "g3", Group: "g3", Auto: true}}); p != nil {
		t.Errorf("a fourth learner fits beside 4 GiB and three provisional 8 GiB: %s", why)
	}
	for g := range learners { // 5, 6, 7 GiB
		w.run(uint32(100*(g+1)+1), 0, uint64(5+g)*gi, true)
	}
	w.tick(100 * time.Millisecond)
	for g, p := range learners {
		w.a.Release(p)
		got, _ := hist.Learned(fmt.Sprint("g", g))
		if want := learnedNeed(uint64(5+g) * gi); got != want {
			t.Errorf("group %d learned %d, want %d: its own processes' peak, padded", g, got, want)
		}
	}
}

// TestRequeue: a trial that went beyond its need gets twice what it was measured needing;
// one that stayed within it goes again with the same need; a need no device holds fails.
func TestRequeue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		need     uint64
		peak     uint64 // its own processes' peak
		said     OOM    // what its error message said
		wantNeed uint64
		wantErr  bool
	}{
		{"beyond its need: twice the peak", 4 * gi, 10 * gi, OOM{}, 20 * gi, false},
		{"the message says it held more than the peak", 2 * gi, 3 * gi, OOM{Held: 4 * gi, Tried: gi}, 10 * gi, false},
		{"within its need: the same need", 8 * gi, 6 * gi, OOM{Tried: gi}, 8 * gi, false},
		{"rounded up to 256 MiB", 2 * gi, 3*gi + 1, OOM{}, 6*gi + 256<<20, false},
		{"capped at the largest device less its margin", 8 * gi, 20 * gi, OOM{}, 32*gi - 32*gi/20, false},
		{"a measured need no device holds fails", 8 * gi, 10 * gi, OOM{Held: 30 * gi, Tried: 10 * gi}, 0, true},
		// Seen on an H100: a 90 GiB allocation was requeued at 2, 2.5 and 3.2 GiB.
		{"asking for more than any device has fails at once", 2 * gi, gi, OOM{Tried: 90 * gi}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(32 * gi)
			p, _, _ := place(w.a, mem(1, tc.need))
			w.start(p, 10, 11, tc.peak, true)
			w.tick(100 * time.Millisecond)
			w.a.Release(p)
			need, n, err := w.a.Requeue(p, tc.said)
			if tc.wantErr {
				if !errors.Is(err, ErrNeverFits) {
					t.Fatalf("Requeue = %d, %v; want ErrNeverFits", need, err)
				}
				return
			}
			if err != nil || n != 1 || need != tc.wantNeed {
				t.Fatalf("Requeue = %d GiB, %d, %v; want %d GiB, 1", need>>30, n, err, tc.wantNeed>>30)
			}
			w.exit(11)
			if q, _, _ := place(w.a, mem(1, tc.need)); q == nil || q.Need != tc.wantNeed {
				t.Errorf("placed again with %+v, want need %d", q, tc.wantNeed)
			}
		})
	}
	t.Run("a single allocation beyond every device, its processes unknown", func(t *testing.T) {
		a := newTestAdmitter(newFakeProbe(32 * gi))
		p, _, _ := place(a, mem(1, 2*gi))
		a.Release(p)
		if need, _, err := a.Requeue(p, OOM{Tried: 90 * gi}); !errors.Is(err, ErrNeverFits) {
			t.Fatalf("Requeue = %d, %v; want ErrNeverFits", need, err)
		}
	})
	t.Run("at most OOMRetries times", func(t *testing.T) {
		a := newTestAdmitter(newFakeProbe(32 * gi))
		for i := 1; i <= 3; i++ {
			p, _, _ := place(a, mem(1, gi))
			a.Release(p)
			_, n, err := a.Requeue(p, OOM{})
			if want := i <= 2; (err == nil) != want || (err == nil && n != i) {
				t.Fatalf("requeue %d: err %v n %d", i, err, n)
			}
		}
	})
	t.Run("within its need: not counted against OOMRetries", func(t *testing.T) {
		w := newWorld(32 * gi)
		for i := 1; i <= victimRetries+1; i++ {
			p, _, _ := place(w.a, mem(1, 8*gi))
			w.start(p, 10*i, uint32(10*i+1), 6*gi, true)
			w.tick(100 * time.Millisecond)
			w.a.Release(p)
			w.exit(uint32(10*i + 1))
			need, n, err := w.a.Requeue(p, OOM{Tried: gi})
			if want := i <= victimRetries; (err == nil) != want || (err == nil && (n != i || need != 8*gi)) {
				t.Fatalf("requeue %d of a trial within its need: %d GiB, %d, %v", i, need>>30, n, err)
			}
		}
	})
	t.Run("nothing measured: twice the need", func(t *testing.T) {
		a := newTestAdmitter(newFakeProbe(32 * gi))
		p, _, _ := place(a, mem(1, 3*gi))
		a.Release(p)
		if need, _, err := a.Requeue(p, OOM{Tried: gi}); err != nil || need != 6*gi {
			t.Errorf("Requeue = %d GiB, %v; want 6 GiB", need>>30, err)
		}
	})
	t.Run("siblings wait for what one of them showed", func(t *testing.T) {
		w := newWorld(32 * gi)
		req := func(id int) Request {
			return Request{Request: needs.Request{ID: id, Name: fmt.Sprint("t", id), Group: "sweep", Memory: 2 * gi}}
		}
		p, _, _ := place(w.a, req(1))
		w.start(p, 10, 11, 6*gi, true)
		w.tick(100 * time.Millisecond)
		w.a.Release(p)
		w.exit(11)
		if _, _, err := w.a.Requeue(p, OOM{}); err != nil {
			t.Fatal(err)
		}
		if q, _, _ := place(w.a, req(2)); q == nil || q.Need != learnedNeed(6*gi) {
			t.Errorf("sibling placed with %+v, want the 6 GiB its sibling showed, padded", q)
		}
	})
}

// An under-declaring trial converges within the default oom-retries (2): 5x under.
func TestRequeueConvergesOn5xUnderDeclared(t *testing.T) {
	w := newWorld(80 * gi)
	const declared, real = 4 * gi, 20 * gi
	need := uint64(declared)
	for attempt := 1; ; attempt++ {
		p, why, _ := place(w.a, mem(1, need))
		if p == nil {
			t.Fatalf("attempt %d waits: %s", attempt, why)
		}
		// It grows until it fails: here at just past its reservation (the worst case: the
		// rest of the device was taken), or it reaches what it really needs.
		reached := min(real, need+gi)
		w.start(p, 10*attempt, uint32(10*attempt+1), reached, true)
		w.tick(100 * time.Millisecond)
		w.a.Release(p)
		w.exit(uint32(10*attempt + 1))
		if reached == real {
			if attempt > 3 {
				t.Errorf("converged on attempt %d, want within 2 requeues", attempt)
			}
			return
		}
		var err error
		if need, _, err = w.a.Requeue(p, OOM{}); err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
	}
}

// TestAttributionHere: with PIDs of runall's namespace, each trial's memory is its own
// processes' (several of them, too), whatever else runs on the device.
func TestAttributionHere(t *testing.T) {
	w := newWorld(32 * gi)
	w.run(5, 0, 3*gi, true) // someone else's, here before
	w.tick(0)
	a, _, _ := place(w.a, mem(1, 8*gi))
	b, _, _ := place(w.a, mem(2, 8*gi))
	if b != nil {
		t.Fatal("a second launch on the device before the first showed a process: want it held back while PIDs are unknown")
	}
	w.start(a, 10, 11, 5*gi, true)
	w.tree[12] = proc.Lineage{PGID: 999, Ancestors: []int{10}} // DDP worker: left the group, still under the shell
	w.run(12, 0, 2*gi, true)
	w.tick(100 * time.Millisecond)
	b, why, _ := place(w.a, mem(2, 8*gi))
	if b == nil {
		t.Fatalf("second trial waits once PIDs are known to be here: %s", why)
	}
	w.start(b, 20, 21, 9*gi, true)
	w.run(6, 0, gi, true) // someone else's, new
	w.tick(100 * time.Millisecond)
	if peak, src := w.a.Peak(a); peak != 7*gi || src != SourceProcess {
		t.Errorf("trial a: peak %d from %s, want 7 GiB from its processes", peak, src)
	}
	if peak, src := w.a.Peak(b); peak != 9*gi || src != SourceProcess {
		t.Errorf("trial b: peak %d from %s, want 9 GiB from its process", peak, src)
	}
	// a holds 7 of 8 reserved, b is beyond its 8: 1 GiB reserved in all.
	if r := w.a.devs.reserved(w.a.meter.snap, w.a.meter.exact)[0]; r != gi {
		t.Errorf("reserved %d, want 1 GiB", r)
	}
}

// TestAttributionElsewhere: with the host's PIDs, a process is tied to the trial launched
// on its device just before it appeared, and a second launch waits for that tie.
func TestAttributionElsewhere(t *testing.T) {
	w := newWorld(32 * gi)
	a, _, _ := place(w.a, mem(1, 6*gi))
	w.a.Started(a, 10)
	if p, why, _ := place(w.a, mem(2, 6*gi)); p != nil || why != TieWait {
		t.Fatalf("second launch: %v %q; want it held while the first is tied", p, why)
	}
	w.run(4_000_011, 0, 4*gi, false)
	w.run(4_000_012, 0, gi, false) // its second process, at once
	w.tick(100 * time.Millisecond)
	if got := w.a.PIDs(); got != PIDsElsewhere {
		t.Fatalf("PIDs %v, want elsewhere", got)
	}
	if p, _, _ := place(w.a, mem(2, 6*gi)); p != nil {
		t.Error("second launch within the quiet second after the tie")
	}
	w.tick(1100 * time.Millisecond)
	b, why, _ := place(w.a, mem(2, 6*gi))
	if b == nil {
		t.Fatalf("second launch after the tie: %s", why)
	}
	w.a.Started(b, 20)
	w.exit(4_000_012) // a's second process ends as b's starts
	w.run(4_000_021, 0, 3*gi, false)
	w.tick(100 * time.Millisecond)
	w.run(4_000_011, 0, 5*gi, false)
	w.tick(100 * time.Millisecond)
	if peak, src := w.a.Peak(a); peak != 5*gi || src != SourceOrder {
		t.Errorf("trial a: peak %d GiB from %s, want 5 GiB by order", peak>>30, src)
	}
	if peak, src := w.a.Peak(b); peak != 3*gi || src != SourceOrder {
		t.Errorf("trial b: peak %d GiB from %s, want 3 GiB by order", peak>>30, src)
	}
}

// Two trials whose processes could not be told apart fall back to the device estimate,
// and say so.
func TestAttributionAmbiguous(t *testing.T) {
	w := newWorld(32 * gi)
	w.a.meter.pids = PIDsElsewhere
	a, _, _ := place(w.a, mem(1, 4*gi))
	w.a.Started(a, 10)
	w.tick(tieWindow) // a showed nothing in time: the device is free for another launch
	b, why, _ := place(w.a, mem(2, 4*gi))
	if b == nil {
		t.Fatalf("b: %s", why)
	}
	w.a.Started(b, 20)
	w.tick(tieWindow)
	w.run(4_000_100, 0, 6*gi, false) // whose? neither launch is open, both unseen
	w.tick(100 * time.Millisecond)
	for _, p := range []*Placement{a, b} {
		if _, src := w.a.Peak(p); src != SourceDevice {
			t.Errorf("trial %s: source %s, want the device estimate", p.req.Name, src)
		}
	}
}

// TestAttributionNone: a device that grows under a trial while its driver reports no
// processes makes the admitter estimate from growth, and stop holding launches back.
func TestAttributionNone(t *testing.T) {
	w := newWorld(32 * gi)
	a, _, _ := place(w.a, mem(1, 4*gi))
	w.a.Started(a, 10)
	w.use(0, 3*gi)
	w.tick(100 * time.Millisecond)
	if got := w.a.PIDs(); got != PIDsUnknown {
		t.Fatalf("after one sample PIDs %v, want unknown: a process may be read a moment after its memory", got)
	}
	w.tick(tieQuiet)
	if got := w.a.PIDs(); got != PIDsNone {
		t.Fatalf("PIDs %v, want none", got)
	}
	if peak, src := w.a.Peak(a); peak != 3*gi || src != SourceDevice {
		t.Errorf("peak %d from %s, want 3 GiB estimated from the device", peak, src)
	}
	if p, why, _ := place(w.a, mem(2, 4*gi)); p == nil {
		t.Errorf("second launch still held: %s", why)
	}
}

// TestBaselineWhileReleasing: memory still being freed after a trial ended does not become
// the baseline of the next trial, which would hide its growth (a 13.7 GiB trial once
// learned 64 MiB so); a learner that is alone on its device waits for it to go.
func TestBaselineWhileReleasing(t *testing.T) {
	w := newWorld(32 * gi)
	w.a.meter.pids = PIDsNone
	p, _, _ := place(w.a, mem(1, 14*gi))
	w.use(0, 14*gi)
	w.tick(100 * time.Millisecond)
	w.a.Release(p)
	w.tick(100 * time.Millisecond) // its memory is still there
	learn := Request{Request: needs.Request{ID: 2, Name: "l", Group: "g", Auto: true}}
	if learner, why, _ := place(w.a, learn); learner != nil || !strings.Contains(why, "still being freed") {
		t.Fatalf("learner placed beside memory still being freed (%s)", why)
	}
	w.use(0, 0)
	w.tick(100 * time.Millisecond)
	learner, why, _ := place(w.a, learn)
	if learner == nil {
		t.Fatalf("learner: %s", why)
	}
	w.use(0, 6*gi)
	w.tick(100 * time.Millisecond)
	w.a.Release(learner)
	if got, _ := w.hist.Learned("g"); got != learnedNeed(6*gi) {
		t.Errorf("learned %d MiB, want %d MiB: the 6 GiB the learner used", got>>20, learnedNeed(6*gi)>>20)
	}
}

// TestDrainingIsNoTrialsGrowth: memory an ended trial has not yet given back is neither
// taken for the growth of the trials placed after it (which would shrink their reservations
// and admit trials into memory not yet free) nor counted as theirs; once it goes, their own
// growth is theirs.
func TestDrainingIsNoTrialsGrowth(t *testing.T) {
	w := newWorld(32 * gi)
	w.a.meter.pids = PIDsNone
	old, _, _ := place(w.a, mem(1, 10*gi))
	w.use(0, 10*gi)
	w.tick(100 * time.Millisecond)
	w.a.Release(old)
	b, why, _ := place(w.a, mem(2, 8*gi))
	if b == nil {
		t.Fatal(why)
	}
	w.use(0, 10*gi+gi) // b's context beside the 10 GiB on its way out
	w.tick(100 * time.Millisecond)
	// 32 - 11 used = 21 free; b has 7 GiB yet to allocate; 1.6 GiB margin: 12.4 GiB left.
	if p, _, _ := place(w.a, mem(3, 13*gi)); p != nil {
		t.Errorf("13 GiB admitted beside 10 GiB still being freed and b's 7 GiB to come")
	}
	if peak, _ := w.a.Peak(b); peak != gi {
		t.Errorf("b's peak %d MiB, want its own 1 GiB, not the old trial's memory", peak>>20)
	}
	w.use(0, gi) // the old memory goes
	w.tick(100 * time.Millisecond)
	w.use(0, 8*gi)
	w.tick(100 * time.Millisecond)
	if peak, _ := w.a.Peak(b); peak != 8*gi {
		t.Errorf("b's peak %d MiB after the old memory went, want its own 8 GiB", peak>>20)
	}
}

// TestConcurrentPlaceRelease places and releases from many goroutines at once (run it with
// -race): whatever the interleaving, what is reserved on a device never exceeds what it has
// free beyond the margin, and everything is released at the end.
func TestConcurrentPlaceRelease(t *testing.T) {
	probe := newFakeProbe(32*gi, 16*gi, 24*gi)
	a := newTestAdmitter(probe)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 200 {
				req := mem(g*1000+i, uint64(1+rng.IntN(8))*gi)
				p, _, err := a.Place(req)
				if err != nil {
					t.Error(err)
					return
				}
				if p != nil {
					a.Release(p)
				}
			}
		}()
	}
	stop := make(chan struct{})
	var checker sync.WaitGroup
	checker.Add(1)
	go func() {
		defer checker.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			a.mu.Lock()
			for i, d := range a.meter.snap {
				if r := a.devs.list[i].reserved(i, d.Used, a.meter.exact); r > d.Total-a.margin.For(d.Total) {
					t.Errorf("GPU%d: %d reserved of %d", i, r, d.Total)
				}
			}
			a.mu.Unlock()
		}
	}()
	wg.Wait()
	close(stop)
	checker.Wait()
	for i, st := range a.devs.list {
		if len(st.trials) != 0 {
			t.Errorf("GPU%d still holds %d trials", i, len(st.trials))
		}
	}
}

// Changed wakes a waiting trial after a release, after a measurement and when woken through
// its Closed, and not before.
func TestChanged(t *testing.T) {
	a := newTestAdmitter(newFakeProbe(32 << 30))
	p, _, err := place(a, mem(1, 8<<30))
	if err != nil || p == nil {
		t.Fatalf("place: %v, %v", p, err)
	}
	isClosed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ch := a.Changed()
	if isClosed(ch) {
		t.Fatal("Changed is closed before anything changed")
	}
	a.Release(p)
	if !isClosed(ch) {
		t.Error("a release did not close Changed")
	}
	ch = a.Changed()
	measure(a)
	if !isClosed(ch) {
		t.Error("a measurement did not close Changed")
	}
	closed := &Closed{}
	a = New(Options{Probe: newFakeProbe(32 << 30), Margin: defaultMargin, Closed: closed})
	ch = a.Changed()
	closed.Wake() // a gate may let a trial in now (gpu-sharing: progress)
	if !isClosed(ch) {
		t.Error("Closed.Wake did not close Changed")
	}
}

// TestPlaceAfterReleaseSeesFreedMemory: a trial that fits only in the memory a trial just
// freed is placed at once after the release, however recent the last measurement was; it
// used to wait for the next sample (up to 250 ms) when the last one was under 50 ms old.
func TestPlaceAfterReleaseSeesFreedMemory(t *testing.T) {
	w := newWorld(32 * gi)
	w.a.meter.pids = PIDsHere
	w.tick(0)
	a, _, _ := place(w.a, mem(1, 20*gi))
	if a == nil {
		t.Fatal("first trial not placed")
	}
	w.start(a, 10, 11, 20*gi, true)
	w.tick(time.Second)
	if b, _, _ := w.a.Place(mem(2, 20*gi)); b != nil {
		t.Fatal("second 20 GiB trial placed beside the first on 32 GiB")
	}
	w.exit(11)                              // the first trial's process ends ...
	w.clock = w.clock.Add(time.Millisecond) // ... 1 ms after the last measurement
	w.a.Release(a)
	if b, why, _ := w.a.Place(mem(2, 20*gi)); b == nil {
		t.Fatalf("the trial that fits in the freed memory waits after the release: %s", why)
	}
}

// TestBaselineTakenWhileFreeing: a run that starts while the memory of one that just ended
// is still being freed takes a baseline that is too high; once that memory goes, the
// baseline falls with it, and the trials' growth shows again.
func TestBaselineTakenWhileFreeing(t *testing.T) {
	w := newWorld(32 * gi)
	w.use(0, 6*gi) // the last run's trial, on its way out
	w.tick(0)
	p, why, _ := place(w.a, mem(1, 8*gi))
	if p == nil {
		t.Fatal(why)
	}
	w.a.Started(p, 10)
	w.use(0, gi) // the old memory is gone; the new trial's context came
	w.tick(100 * time.Millisecond)
	w.use(0, 5*gi)
	w.tick(100 * time.Millisecond)
	w.tick(tieQuiet)
	if got := w.a.PIDs(); got != PIDsNone {
		t.Errorf("PIDs %v, want none: the device grew by 4 GiB under a trial that showed no process", got)
	}
	if peak, _ := w.a.Peak(p); peak < 4*gi {
		t.Errorf("peak %d MiB, want at least the 4 GiB it grew after the old memory went", peak>>20)
	}
}

// TestForeignProcessNotTied: a process of another user's, on the device before any launch and
// naming no process here, is not tied by order to the first trial launched there.
func TestForeignProcessNotTied(t *testing.T) {
	w := newWorld(32 * gi)
	w.run(8_400_000, 0, 4*gi, false) // another container's, there from the start
	w.tick(0)
	a, why, _ := place(w.a, mem(1, 8*gi))
	if a == nil {
		t.Fatal(why)
	}
	w.a.Started(a, 10)
	w.tick(100 * time.Millisecond)
	w.run(4_000_011, 0, 3*gi, false) // a's own, by the host's pid
	w.tick(100 * time.Millisecond)
	if peak, src := w.a.Peak(a); peak != 3*gi || src != SourceOrder {
		t.Errorf("trial a: peak %d MiB from %s, want its own 3 GiB by order, not the foreign process's", peak>>20, src)
	}
}

// growingProbe is a device whose one process grows by step each time processes are listed,
// as a trial grows between the two calls a measurement makes.
type growingProbe struct {
	*fakeProbe
	pid  uint32 // 0 until the trial has started
	mem  uint64
	step uint64
}

func (g *growingProbe) Processes(i int) ([]gpu.Process, error) {
	if g.pid != 0 {
		g.mem += g.step
		g.run(g.pid, 0, g.mem, true)
	}
	return g.fakeProbe.Processes(i)
}

// TestGrowthBetweenReadsNotCountedTwice: memory a trial allocates between the reading of its
// processes and of its device's use counts once, never as both free and yet to allocate.
func TestGrowthBetweenReadsNotCountedTwice(t *testing.T) {
	w := newWorld(32 * gi)
	g := &growingProbe{fakeProbe: w.fakeProbe, step: 2 * gi}
	w.a.meter.probe = g
	p, _, _ := place(w.a, mem(1, 10*gi))
	w.a.Started(p, 10)
	w.tree[11] = proc.Lineage{PGID: 10}
	g.pid = 11
	for range 3 {
		w.tick(100 * time.Millisecond)
	}
	// However far it has grown, it and what it has yet to allocate are its 10 GiB: 32 - 10 -
	// 1.6 (margin) leaves 20.4 GiB. The growth seen twice would leave 22.4.
	if q, _, _ := w.a.Place(mem(2, 21*gi)); q != nil {
		t.Errorf("21 GiB admitted beside a trial of 10 GiB on 32 GiB: its growth was counted twice")
	}
	if q, why, _ := w.a.Place(mem(3, 20*gi)); q == nil {
		t.Errorf("20 GiB not admitted beside a trial of 10 GiB on 32 GiB: %s", why)
	}
}

// defaultMargin is the task file's default (plan.DefaultMargin), in the admitter's terms.
var defaultMargin = Margin{Bytes: 256 << 20, Fraction: 0.05}
