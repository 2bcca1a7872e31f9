package sharing

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// TestBusySharesPlace: with each trial's utilisation reported, a GPU whose trials fill its
// time takes no more, and one takes a trial only while the busy shares fit in its time;
// where they fit, the rates still decide.
func TestBusySharesPlace(t *testing.T) {
	c := New(Options{MinWindow: time.Second})
	h1, h2 := Trial{ID: "h1", Kind: "heavy"}, Trial{ID: "h2", Kind: "heavy"}
	c.Started(0, "0", h1)
	c.Busy(sec(0.5), "0", "h1", 0.3) // too soon after the mix changed: not used
	c.Busy(sec(2), "0", "h1", 1)
	c.Measured(sec(2), "0", Rate{Trial: "h1", PerSecond: 2, Since: 0})
	if d := c.MayAdmit(sec(2), "0", h2); d.Action != Wait || !strings.Contains(d.Why, "busy 100% of the time alone") {
		t.Errorf("a second heavy trial onto a GPU its first fills: %v", d)
	}
	if d := c.MayAdmit(sec(2), "0", Trial{ID: "x", Kind: "unknown"}); d.Action != Wait {
		t.Errorf("a trial of unknown share onto a GPU its trials fill: %v", d)
	}
	m1, m2, m3 := Trial{ID: "m1", Kind: "medium"}, Trial{ID: "m2", Kind: "medium"}, Trial{ID: "m3", Kind: "medium"}
	c.Started(0, "1", m1)
	c.Busy(sec(2), "1", "m1", 0.5)
	c.Measured(sec(2), "1", Rate{Trial: "m1", PerSecond: 5, Since: 0})
	if d := c.MayAdmit(sec(2), "1", h2); d.Action != Wait || !strings.Contains(d.Why, "take turns") {
		t.Errorf("a heavy trial beside a medium one: %v", d)
	}
	if d := c.MayAdmit(sec(2), "1", m2); d.Action != Admit {
		t.Errorf("a second medium trial fits (0.5 + 0.5): %v", d)
	}
	c.Started(sec(2), "1", m2)
	// Beside m1, m2 runs 1.25x slower: its share of the GPU's time, 0.4, is 0.5 alone.
	c.Busy(sec(4), "1", "m2", 0.4)
	c.Measured(sec(4), "1", Rate{Trial: "m1", PerSecond: 4, Since: sec(2)})
	c.Measured(sec(4), "1", Rate{Trial: "m2", PerSecond: 4, Since: sec(2)})
	if b, _ := c.alone.busyOf(c.trials["m2"]); b < 0.49 || b > 0.51 {
		t.Errorf("m2's busy share alone from its share shared and its slowdown: %.2f, want 0.5", b)
	}
	if d := c.MayAdmit(sec(4), "1", m3); d.Action != Wait || !strings.Contains(d.Why, "busy 100%") {
		t.Errorf("a third medium trial onto two that fill the GPU: %v", d)
	}
	for _, f := range c.Figures().Trials {
		if f.Busy == nil || (f.Trial == "h1" && *f.Busy != 1) || (f.Trial == "m2" && math.Abs(*f.Busy-0.5) > 0.01) {
			t.Errorf("%s's busy share in the figures: %v", f.Trial, f.Busy)
		}
	}
}

// TestBusySharesUnderMPS: with kernels overlapping (Options.Overlap, MPS), a trial whose
// busy share fills the GPU keeps no other out: two that each fill half the SMs run side by
// side, so the rates, not the shares, judge the mix; shares that fit still let a trial join
// before the mix is measured.
func TestBusySharesUnderMPS(t *testing.T) {
	c := New(Options{MinWindow: time.Second, Overlap: true})
	h1, h2 := Trial{ID: "h1", Kind: "heavy"}, Trial{ID: "h2", Kind: "heavy"}
	c.Started(0, "0", h1)
	c.Busy(sec(2), "0", "h1", 1)
	c.Measured(sec(2), "0", Rate{Trial: "h1", PerSecond: 2, Since: 0})
	d := c.MayAdmit(sec(2), "0", h2)
	if d.Action != Admit || strings.Contains(d.Why, "take turns") {
		t.Fatalf("under MPS, a second heavy trial beside one that keeps the GPU busy: %v; want it tried", d)
	}
	c.Started(sec(2), "0", h2)
	c.Measured(sec(4), "0", Rate{Trial: "h1", PerSecond: 2, Since: sec(2)})
	if got := c.Measured(sec(4), "0", Rate{Trial: "h2", PerSecond: 2, Since: sec(2)}); len(got) != 1 || got[0].Action != Open {
		t.Errorf("under MPS, two heavy trials each as fast as alone: %v; want one more (2.00x)", got)
	}
	l1, l2 := Trial{ID: "l1", Kind: "light"}, Trial{ID: "l2", Kind: "light"}
	c.Started(0, "1", l1)
	c.Busy(sec(2), "1", "l1", 0.2)
	c.Measured(sec(2), "1", Rate{Trial: "l1", PerSecond: 5, Since: 0})
	c.Started(sec(2), "1", l2)
	c.Busy(sec(3.5), "1", "l1", 0.2)
	c.Busy(sec(3.5), "1", "l2", 0.2)
	if d := c.MayAdmit(sec(3.5), "1", Trial{ID: "l3", Kind: "light"}); d.Action != Admit || !strings.Contains(d.Why, "fit in the GPU's time") {
		t.Errorf("under MPS, a third light trial whose share fits, before the mix is measured: %v", d)
	}
}

// bound is the makespan no packing of the trials on gpus GPUs of world w beats, where
// every trial of a kind runs packed as its kind best packs: each trial's GPU time at that
// packing (its time alone over the throughput of the packing) spread evenly over the
// GPUs, or the longest trial alone. Time-slicing's switching cost is in it; the issue's
// bound (the busy time alone, spread) leaves it out.
func bound(w world, trials []*kind, gpus, memGiB int) time.Duration {
	total, longest := 0.0, 0.0
	for _, k := range trials {
		alone := k.steps / k.alone
		best := 0.0
		for n := 1; n*k.mem <= memGiB; n++ {
			best = max(best, throughputOf(w, k, n))
		}
		total += alone / best
		longest = max(longest, alone)
	}
	return time.Duration(max(total/float64(gpus), longest) * float64(time.Second))
}

// TestMixedSweepByBusyShares: the bench's mixed sweep (eight heavy, eight medium, eight
// light trials, heavy ones first) on time-slicing GPUs with the simulated GPUs' 25%
// switching cost: with each process's utilisation reported, packing by progress places
// trials by their busy shares and comes within 10% of the bound packing can reach.
func TestMixedSweepByBusyShares(t *testing.T) {
	w := timeSlice{switchCost: 0.25}
	var trials []*kind
	for _, k := range []*kind{heavy, medium, light} {
		k := *k
		k.canPause = false // as the bench's: no checkpoint to undo a co-location at
		trials = append(trials, sweepOf(8, &k)...)
	}
	b := bound(w, trials, 2, 32)
	withUtil := newSim(w, byProgress{c: New(Options{MinWindow: time.Second}), util: true}, 2, 32, trials)
	got := withUtil.run(t)
	rates := newSim(w, byProgress{c: New(Options{MinWindow: time.Second})}, 2, 32, trials).run(t)
	one := newSim(w, &byMemory{most: 1, on: map[string]int{}}, 2, 32, trials).run(t)
	t.Logf("makespan: by busy shares and rates %v, by rates alone %v, one at a time %v; bound %v", got, rates, one, b)
	if float64(got) > 1.10*float64(b) {
		t.Errorf("makespan by busy shares %v, more than 10%% over the bound %v", got, b)
	}
	undoneInTime(t, withUtil)
}

// TestFitsBeforeMeasured: trials whose busy shares fit join a GPU one after another, each
// once the driver reported the shares of those there, without waiting for the mix's
// rates; the mix they make is then judged by its rates against the one before them.
func TestFitsBeforeMeasured(t *testing.T) {
	c := New(Options{MinWindow: time.Second})
	l := func(i int) Trial { return Trial{ID: fmt.Sprintf("l%d", i), Kind: "light"} }
	c.Started(0, "0", l(1))
	c.Busy(sec(1.5), "0", "l1", 0.2)
	c.Measured(sec(2), "0", Rate{Trial: "l1", PerSecond: 10, Since: 0})
	if d := c.MayAdmit(sec(2), "0", l(2)); d.Action != Admit {
		t.Fatalf("l2 onto l1 measured alone: %v", d)
	}
	c.Started(sec(2), "0", l(2))
	if d := c.MayAdmit(sec(2.5), "0", l(3)); d.Action != Wait || !strings.Contains(d.Why, "measuring") {
		t.Errorf("l3 before the driver reported the new mix's shares: %v", d)
	}
	for i := 3; i <= 4; i++ {
		at := sec(1.5 * float64(i))
		for j := 1; j < i; j++ {
			c.Busy(at, "0", fmt.Sprintf("l%d", j), 0.2)
		}
		if d := c.MayAdmit(at, "0", l(i)); d.Action != Admit || !strings.Contains(d.Why, "fit in the GPU's time") {
			t.Fatalf("l%d, the shares reported and fitting: %v", i, d)
		}
		c.Started(at, "0", l(i))
	}
	var ds []Decision
	for j := 1; j <= 4; j++ {
		ds = c.Measured(sec(9), "0", Rate{Trial: fmt.Sprintf("l%d", j), PerSecond: 7, Since: sec(6)})
	}
	if len(ds) != 1 || ds[0].Action != Open || ds[0].Before != 1 || !strings.Contains(ds[0].Why, "before 3 trials up to l4 joined") {
		t.Errorf("the mix l2, l3 and l4 made, against l1 alone: %v", ds)
	}
}

// TestBusySharesWhereRatesSay: trials whose busy shares fit in the GPU's time but who
// contend for what the GPU's time does not show (two host cores feeding their input
// pipelines): with each process's utilisation reported, they still settle where their
// measured rates say, not where the shares would pack them.
func TestBusySharesWhereRatesSay(t *testing.T) {
	w := cpuCap{timeSlice: timeSlice{switchCost: 0.05}, cores: 2, perProc: 0.05}
	want := expectSettle(w, light, DefaultMargin, 32)
	s := newSim(w, byProgress{c: New(Options{MinWindow: time.Second}), util: true}, 2, 32, sweepOf(24, light))
	prog := s.run(t)
	one := newSim(w, &byMemory{most: 1, on: map[string]int{}}, 2, 32, sweepOf(24, light)).run(t)
	mem := newSim(w, &byMemory{on: map[string]int{}}, 2, 32, sweepOf(24, light)).run(t)
	t.Logf("settled %d (rates say %d); makespan %v, memory %v, one at a time %v", s.settled(), want, prog, mem, one)
	if got := s.settled(); got != want {
		t.Errorf("settled at %d trials a GPU, want %d as the rates say (their shares, 0.2 each, fit five)", got, want)
	}
	if best := min(mem, one); float64(prog) > 1.05*float64(best) {
		t.Errorf("makespan by progress %v, more than 5%% over the better of memory %v and one at a time %v", prog, mem, one)
	}
	undoneInTime(t, s)
}

// TestIdleSharesJoinAtOnce: trials whose processes run no kernel (a busy share of 0) take
// no turns on the GPU: once the first is measured alone, the rest join one after another
// without a measurement between them, as packing by memory would place them (issue 42,
// point 4); the mix they made is then judged by its rates.
func TestIdleSharesJoinAtOnce(t *testing.T) {
	c := New(Options{MinWindow: time.Second})
	s := func(i int) Trial { return Trial{ID: fmt.Sprintf("s%d", i), Kind: "sleeper"} }
	c.Started(0, "0", s(1))
	c.Busy(sec(1), "0", "s1", 0)
	c.Measured(sec(1.1), "0", Rate{Trial: "s1", PerSecond: 10, Since: 0})
	for i := 2; i <= 8; i++ {
		if d := c.MayAdmit(sec(1.1), "0", s(i)); d.Action != Admit {
			t.Fatalf("s%d beside %d trials that compute nothing: %v", i, i-1, d)
		}
		c.Started(sec(1.1), "0", s(i))
	}
	var ds []Decision
	for j := 1; j <= 8; j++ {
		ds = c.Measured(sec(2.2), "0", Rate{Trial: fmt.Sprintf("s%d", j), PerSecond: 10, Since: sec(1.1)})
	}
	if len(ds) != 1 || ds[0].Action != Open || !strings.Contains(ds[0].Why, "7 trials up to s8 joined") {
		t.Errorf("the mix the seven made, against s1 alone: %v", ds)
	}
}

// TestRateBeforeTheDriversShare: a trial measured alone before the driver's first share
// from within its mix lets no trial in on a GPU whose driver reports shares: the share may
// fill it. Once reported, the share decides; a share that never comes (processes not told
// apart) holds the GPU back for three MinWindows at most.
func TestRateBeforeTheDriversShare(t *testing.T) {
	c := New(Options{MinWindow: time.Second})
	h := func(i int) Trial { return Trial{ID: fmt.Sprintf("h%d", i), Kind: "heavy"} }
	c.Started(0, "0", h(1))
	c.Busy(sec(0.3), "0", "h1", 1) // before MinWindow: the GPU answers, its share is not taken
	c.Measured(sec(1), "0", Rate{Trial: "h1", PerSecond: 10, Since: 0})
	if d := c.MayAdmit(sec(1), "0", h(2)); d.Action != Wait || !strings.Contains(d.Why, "busy shares") {
		t.Fatalf("h2 before h1's share was reported: %v, want a wait for it", d)
	}
	c.Busy(sec(1.2), "0", "h1", 1)
	if d := c.MayAdmit(sec(1.2), "0", h(2)); d.Action != Wait || !strings.Contains(d.Why, "busy 100% of the time") {
		t.Errorf("h2 beside h1, whose share fills the GPU: %v", d)
	}

	c = New(Options{MinWindow: time.Second})
	c.Started(0, "0", h(1))
	c.Busy(sec(0.3), "0", "h1", 1)
	c.Measured(sec(1), "0", Rate{Trial: "h1", PerSecond: 10, Since: 0})
	if d := c.MayAdmit(sec(3), "0", h(2)); d.Action != Admit {
		t.Errorf("h2 three MinWindows on, no share reported since: %v, want the rates to decide", d)
	}
}

// TestIdleShareNeedsNoRate: a trial whose known processes the driver reports at 0% has a
// busy share of 0 without a rate window: the next trial of its kind joins at once (issue
// 42, point 4), and the rest after it. A share above 0 still waits for a rate, and one
// that follows a share of 0 (a set-up at 0%, then kernels) takes the 0 back.
func TestIdleShareNeedsNoRate(t *testing.T) {
	s := func(i int) Trial { return Trial{ID: fmt.Sprintf("s%d", i), Kind: "sleeper"} }
	c := New(Options{MinWindow: time.Second})
	c.Started(0, "0", s(1))
	c.Busy(sec(1), "0", "s1", 0)
	for i := 2; i <= 8; i++ {
		if d := c.MayAdmit(sec(1), "0", s(i)); d.Action != Admit {
			t.Fatalf("s%d beside %d trials reported at 0%%, none measured yet: %v", i, i-1, d)
		}
		c.Started(sec(1), "0", s(i))
	}

	h := func(i int) Trial { return Trial{ID: fmt.Sprintf("h%d", i), Kind: "heavy"} }
	c = New(Options{MinWindow: time.Second})
	c.Started(0, "0", h(1))
	c.Busy(sec(1), "0", "h1", 0.4)
	if d := c.MayAdmit(sec(1), "0", h(2)); d.Action != Wait {
		t.Errorf("h2 beside h1 at 40%%, not measured yet: %v, want today's wait for its rate", d)
	}

	c = New(Options{MinWindow: time.Second})
	c.Started(0, "0", h(1))
	c.Busy(sec(1), "0", "h1", 0) // setting up
	c.Busy(sec(1.25), "0", "h1", 1)
	if d := c.MayAdmit(sec(1.25), "0", h(2)); d.Action != Wait {
		t.Errorf("h2 beside h1, at 0%% then 100%%: %v, want a wait", d)
	}
	if _, ok := c.alone.busy["heavy"]; ok {
		t.Errorf("the kind keeps the share of 0 its first trial had setting up")
	}
}

// TestIdleShareAfterOneDriverSample: a share of 0 counts one driver sample after the mix
// changed, not a MinWindow; a share above 0 still waits the MinWindow, and a share of 0
// read before the driver sampled once since the change counts for nothing.
func TestIdleShareAfterOneDriverSample(t *testing.T) {
	s := func(i int) Trial { return Trial{ID: fmt.Sprintf("s%d", i), Kind: "sleeper"} }
	c := New(Options{MinWindow: time.Second})
	c.Started(0, "0", s(1))
	c.Busy(DriverSample/2, "0", "s1", 0)
	if c.trials["s1"].hasBusy {
		t.Errorf("a share of 0 before the driver sampled once since the mix changed was taken")
	}
	c.Busy(DriverSample, "0", "s1", 0)
	if d := c.MayAdmit(DriverSample, "0", s(2)); d.Action != Admit {
		t.Errorf("s2 beside s1, at 0%% one driver sample after it started: %v", d)
	}
	h := Trial{ID: "h1", Kind: "heavy"}
	c.Started(0, "1", h)
	c.Busy(sec(0.5), "1", "h1", 0.5)
	if c.trials["h1"].hasUtil {
		t.Errorf("a share above 0 before the MinWindow was taken")
	}
}

// TestSummaryOfIdleTrials: trials that joined beside shares of 0 before any ran alone long
// enough to be measured have no rate alone; the summary says what the shares showed rather
// than nothing, and nothing where a share is not 0.
func TestSummaryOfIdleTrials(t *testing.T) {
	s := func(i int) Trial { return Trial{ID: fmt.Sprintf("s%d", i), Kind: "sleeper"} }
	c := New(Options{MinWindow: time.Second})
	c.Started(0, "0", s(1))
	c.Busy(DriverSample, "0", "s1", 0)
	c.Started(DriverSample, "0", s(2))
	c.Busy(2*DriverSample, "0", "s2", 0)
	c.Measured(sec(2), "0", Rate{Trial: "s1", PerSecond: 10, Since: sec(1), Steps: 20})
	c.Measured(sec(2), "0", Rate{Trial: "s2", PerSecond: 10, Since: sec(1), Steps: 18})
	want := "its trials' processes ran no kernel (busy shares of 0): sharing ran up to 2 at once on a GPU, as packing by memory would; no rate alone was measured to say how much faster"
	if got := c.Figures().Summary(c.End()); got != want {
		t.Errorf("summary of two trials at 0%%: %q, want %q", got, want)
	}
	f := c.Figures()
	half := 0.5
	f.Trials[1].Busy = &half
	if got := f.Summary(c.End()); got != "" {
		t.Errorf("summary with a share of 0.5 and no rate alone: %q, want none", got)
	}
}
