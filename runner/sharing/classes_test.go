package sharing

import (
	"testing"
	"time"
)

// throughputOf is what the world makes of n trials of k on one GPU, in trials alone.
func throughputOf(w world, k *kind, n int) float64 {
	ks := make([]*kind, n)
	for i := range ks {
		ks[i] = k
	}
	sum := 0.0
	for _, r := range w.rates(ks) {
		sum += r / k.alone
	}
	return sum
}

// expectSettle is where the rule should settle a GPU of trials of k, from the world's
// rates: it adds one while the last one raised throughput by more than margin, keeps one
// that did not lower it, and stops within memory.
func expectSettle(w world, k *kind, margin float64, memGiB int) int {
	n := 1
	for (n+1)*k.mem <= memGiB {
		ratio := throughputOf(w, k, n+1) / throughputOf(w, k, n)
		if ratio >= 1 {
			n++
		}
		if ratio <= 1+margin {
			break
		}
	}
	return n
}

func sweepOf(n int, ks ...*kind) []*kind {
	out := make([]*kind, n)
	for i := range out {
		out[i] = ks[i%len(ks)]
	}
	return out
}

// makespans runs one sweep three ways: packed by progress (the controller), by memory, and
// one trial at a time per GPU; it returns the progress run too.
func makespans(t *testing.T, w world, trials []*kind) (progress *sim, byProg, byMem, oneAtATime time.Duration) {
	t.Helper()
	c := New(Options{MinWindow: time.Second})
	progress = newSim(w, byProgress{c: c}, 2, 32, trials)
	byProg = progress.run(t)
	byMem = newSim(w, &byMemory{on: map[string]int{}}, 2, 32, trials).run(t)
	oneAtATime = newSim(w, &byMemory{most: 1, on: map[string]int{}}, 2, 32, trials).run(t)
	return progress, byProg, byMem, oneAtATime
}

// undoneInTime fails when a co-location that lowered a GPU's throughput was not undone
// within two checkpoint intervals of the admission that made it.
func undoneInTime(t *testing.T, s *sim) {
	t.Helper()
	for _, u := range s.undo {
		if u > 2*s.copyEvery {
			t.Errorf("a co-location that lowered throughput was undone %v after it began, more than two copies (%v)", u, 2*s.copyEvery)
		}
	}
}

// TestClassesSettle: on time-slicing GPUs, light trials (busy 0.2) settle at five a GPU,
// medium (0.5) at two and heavy (1.0) at one, as their rates say, and packing by progress
// is within 5% of the better of packing by memory and one at a time.
func TestClassesSettle(t *testing.T) {
	w := timeSlice{switchCost: 0.05}
	for _, tt := range []struct {
		k     *kind
		wantN int // the model's answer, checked by expectSettle too
	}{{light, 5}, {medium, 2}, {heavy, 1}} {
		t.Run(tt.k.name, func(t *testing.T) {
			want := expectSettle(w, tt.k, DefaultMargin, 32)
			if want != tt.wantN {
				t.Fatalf("the in-test model settles %s at %d, the test expects %d", tt.k.name, want, tt.wantN)
			}
			s, prog, mem, one := makespans(t, w, sweepOf(24, tt.k))
			if got := s.settled(); got != want {
				t.Errorf("settled at %d trials a GPU, want %d", got, want)
			}
			if best := min(mem, one); float64(prog) > 1.05*float64(best) {
				t.Errorf("makespan by progress %v, more than 5%% over the better of memory %v and one at a time %v", prog, mem, one)
			}
			undoneInTime(t, s)
			lowers := 0
			for _, d := range s.p.(byProgress).c.Decisions() {
				if d.Action == Lower {
					lowers++
				}
			}
			if tt.k == heavy && (lowers == 0 || lowers > 2) {
				t.Errorf("heavy: %d lowerings, want one probe undone on each GPU and never again", lowers)
			}
			t.Logf("%s: settled %d; makespan progress %v, memory %v, one at a time %v", tt.k.name, s.settled(), prog, mem, one)
		})
	}
}

// TestMixedSweep: light, medium and heavy trials in one sweep: packing by progress is no
// slower than the better of the other two, and every co-location that lowered a GPU's
// throughput is undone within two checkpoint intervals.
func TestMixedSweep(t *testing.T) {
	w := timeSlice{switchCost: 0.05}
	s, prog, mem, one := makespans(t, w, sweepOf(24, light, medium, heavy))
	if best := min(mem, one); float64(prog) > 1.05*float64(best) {
		t.Errorf("makespan by progress %v, more than 5%% over the better of memory %v and one at a time %v", prog, mem, one)
	}
	undoneInTime(t, s)
	t.Logf("mixed: makespan progress %v, memory %v, one at a time %v; %d undone", prog, mem, one, len(s.undo))
}

// TestSettlesWhereRatesSay: trials contend for what the time-slicing model does not have
// (two host cores feeding their input pipelines): the controller settles where their
// measured rates say, not where time-slicing would.
func TestSettlesWhereRatesSay(t *testing.T) {
	w := cpuCap{timeSlice: timeSlice{switchCost: 0.05}, cores: 2, perProc: 0.05}
	want := expectSettle(w, light, DefaultMargin, 32)
	if slicing := expectSettle(w.timeSlice, light, DefaultMargin, 32); want == slicing {
		t.Fatalf("the host cores change nothing (%d both ways): the test proves nothing", want)
	}
	s, prog, mem, one := makespans(t, w, sweepOf(24, light))
	if got := s.settled(); got != want {
		t.Errorf("settled at %d trials a GPU, want %d (time-slicing alone would say %d)", got, want, expectSettle(w.timeSlice, light, DefaultMargin, 32))
	}
	if best := min(mem, one); float64(prog) > 1.05*float64(best) {
		t.Errorf("makespan by progress %v, more than 5%% over the better of memory %v and one at a time %v", prog, mem, one)
	}
	undoneInTime(t, s)
}

// TestDropUndoneWithinTwoCopies: whatever the checkpoint interval, a co-location that
// lowered a GPU's throughput (a heavy trial probed beside another, medium ones past two) is
// undone, its last trial paused, within two checkpoint intervals of its admission.
func TestDropUndoneWithinTwoCopies(t *testing.T) {
	w := timeSlice{switchCost: 0.05}
	for _, k := range []*kind{heavy, medium} {
		for _, every := range []time.Duration{4 * time.Second, 10 * time.Second, 30 * time.Second} {
			s := newSim(w, byProgress{c: New(Options{MinWindow: time.Second})}, 2, 32, sweepOf(12, k))
			s.copyEvery = every
			s.run(t)
			if len(s.undo) == 0 {
				t.Errorf("%s, copies every %v: no co-location was undone", k.name, every)
			}
			for _, u := range s.undo {
				if u > 2*every {
					t.Errorf("%s, copies every %v: undone %v after it began, more than two copies", k.name, every, u)
				}
			}
		}
	}
}
