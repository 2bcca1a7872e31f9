package admit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/plan"
)

const gi = 1 << 30

// fakeProbe is a set of devices whose use a test sets by hand.
type fakeProbe struct {
	mu   sync.Mutex
	devs []gpu.Device
}

func newFakeProbe(totals ...uint64) *fakeProbe {
	p := &fakeProbe{}
	for i, t := range totals {
		p.devs = append(p.devs, gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Total: t, Free: t})
	}
	return p
}

// use sets what is in use on device i.
func (p *fakeProbe) use(i int, used uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.devs[i].Used, p.devs[i].Free = used, p.devs[i].Total-used
}

func (p *fakeProbe) Devices() ([]gpu.Device, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]gpu.Device(nil), p.devs...), nil
}

func (p *fakeProbe) Processes(int) ([]gpu.Process, error) { return nil, nil }
func (p *fakeProbe) Env(ix []int) []string                { return []string{fmt.Sprint("CUDA_VISIBLE_DEVICES=", ix)} }
func (p *fakeProbe) Close() error                         { return nil }

// newTestAdmitter is an admitter over probe with the default margin (5%, at least 256 MiB).
func newTestAdmitter(probe gpu.Probe) *Admitter {
	return New(Options{Probe: probe, Margin: plan.DefaultMargin, OOMRetries: 2})
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

func mem(id int, need uint64) Request { return Request{ID: id, Name: fmt.Sprint("t", id), Memory: need} }

// TestReservations walks one 32 GiB device through placements and measured use. The margin
// there is 1.6 GiB. A trial placed but not yet allocated reserves its whole need; as the
// device's use grows the reservation shrinks by as much, so nothing is counted twice.
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
			{30 * gi, mem(2, 512 << 20), -1}, // 2 GiB free, 1.6 GiB of it margin
			{30 * gi, mem(3, 256 << 20), 0},
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
			Request{ID: 1, Memory: 8 * gi, Devices: 2}, []int{1, 2}},
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
	if _, _, err := place(a, Request{ID: 3, Memory: gi, Devices: 3}); err == nil || !strings.Contains(err.Error(), "2 are visible") {
		t.Errorf("3 GPUs of 2: err = %v", err)
	}
}

// TestLearning: the first trial of a gpu-memory: auto group runs alone on a device, its
// siblings wait for it, and its peak (padded) becomes the group's need, kept in the history.
func TestLearning(t *testing.T) {
	probe := newFakeProbe(32*gi, 32*gi)
	hist := NewHistory("")
	a := New(Options{Probe: probe, Margin: plan.DefaultMargin, History: hist})
	auto := func(id int) Request { return Request{ID: id, Name: fmt.Sprint("t", id), Group: "g", Auto: true} }

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

// TestLearningNeedsAnEmptyDevice: with a trial on every device, the learner waits.
func TestLearningNeedsAnEmptyDevice(t *testing.T) {
	a := newTestAdmitter(newFakeProbe(32*gi, 32*gi))
	for id := range 2 {
		if p, why, _ := place(a, mem(id, 20*gi)); p == nil || p.Devices[0] != id {
			t.Fatalf("trial %d: %+v %s", id, p, why)
		}
	}
	p, why, _ := place(a, Request{ID: 3, Group: "g", Auto: true})
	if p != nil || !strings.Contains(why, "learning its GPU memory") {
		t.Errorf("learner placed %v (%q), want it to wait for an empty GPU", p, why)
	}
}

// TestRequeue raises an out-of-memory trial's need to its peak, at least by a quarter,
// never beyond the largest device, at most OOMRetries times.
func TestRequeue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		need     uint64
		peak     uint64
		wantNeed uint64
	}{
		{"to the peak", 4 * gi, 10 * gi, 10 * gi},
		{"at least a quarter more", 8 * gi, 8 * gi, 10 * gi},
		{"rounded up to 256 MiB", 4 * gi, 5*gi + 1, 5*gi + 256<<20},
		{"capped at the largest device less its margin", 20 * gi, 40 * gi, 32*gi - 32*gi/20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := newFakeProbe(32 * gi)
			a := newTestAdmitter(probe)
			p, _, _ := place(a, mem(1, tc.need))
			probe.use(0, tc.peak)
			measure(a)
			a.Release(p)
			need, n, ok := a.Requeue(p)
			if !ok || n != 1 || need != tc.wantNeed {
				t.Fatalf("Requeue = %d, %d, %v; want %d, 1, true", need, n, ok, tc.wantNeed)
			}
			probe.use(0, 0)
			if q, _, _ := place(a, mem(1, tc.need)); q == nil || q.Need != tc.wantNeed {
				t.Errorf("placed again with %+v, want need %d", q, tc.wantNeed)
			}
		})
	}
	t.Run("at most OOMRetries times", func(t *testing.T) {
		a := newTestAdmitter(newFakeProbe(32 * gi))
		for i := 1; i <= 3; i++ {
			p, _, _ := place(a, mem(1, gi))
			a.Release(p)
			_, n, ok := a.Requeue(p)
			if want := i <= 2; ok != want || (ok && n != i) {
				t.Fatalf("requeue %d: ok %v n %d", i, ok, n)
			}
		}
	})
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
			for i, d := range a.snap {
				if r := a.reservedOnLocked(i); r > d.Total-a.margin.For(d.Total) {
					t.Errorf("GPU%d: %d reserved of %d", i, r, d.Total)
				}
			}
			a.mu.Unlock()
		}
	}()
	wg.Wait()
	close(stop)
	checker.Wait()
	for i, st := range a.devs {
		if len(st.trials) != 0 {
			t.Errorf("GPU%d still holds %d trials", i, len(st.trials))
		}
	}
}
