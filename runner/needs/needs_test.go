package needs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/needs"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// policies are the two resources' policies, as their admitters pass them in: every rule of
// the book is tested with each. grow is the need an under-declared trial goes again on,
// before rounding, as each admitter documents it.
var policies = []struct {
	name string
	of   func(oomRetries int) needs.Policy
	grow func(need, measured uint64) uint64
}{
	{"GPU", admit.GPUPolicy, func(need, measured uint64) uint64 { return 2 * max(need, measured) }},
	{"host", hostadmit.HostPolicy, func(need, measured uint64) uint64 { return max(2*need, measured+measured/2) }},
}

// store keeps a test's learned needs.
type store map[string]uint64

func (s store) Learned(group string) (uint64, bool) { n, ok := s[group]; return n, ok }

func (s store) SetLearned(group, _ string, need uint64) { s[group] = need }

var t0 = time.Unix(1e9, 0)

// admitted asks the book for req's need and admits it with that need.
func admitted(t *testing.T, b *needs.Book, req needs.Request) *needs.Trial {
	t.Helper()
	need, learning, wait := b.Need(req)
	if wait != "" {
		t.Fatalf("%s waits: %s", req.Name, wait)
	}
	return b.Admit(req, need, learning)
}

// What a trial needs: its declared need, or its group's learned one, never less than a
// sibling's running out showed; the group's first auto trial learns while the rest wait,
// told in the resource's words.
func TestNeed(t *testing.T) {
	for _, pol := range policies {
		hist := store{"known": 3 * gib}
		b := needs.New(pol.of(2), hist)
		declared := needs.Request{ID: 1, Name: "declared", Group: "d", Memory: 2 * gib}
		if need, learning, wait := b.Need(declared); need != 2*gib || learning || wait != "" {
			t.Errorf("%s: declared: %d MiB, learning %v, %q", pol.name, need/mib, learning, wait)
		}
		known := needs.Request{ID: 2, Name: "known", Group: "known", Auto: true}
		if need, learning, _ := b.Need(known); need != 3*gib || learning {
			t.Errorf("%s: learned in an earlier run: %d MiB, learning %v", pol.name, need/mib, learning)
		}
		first := needs.Request{ID: 3, Name: "first", Group: "new", Auto: true}
		learner := admitted(t, b, first)
		if !learner.Learning() || learner.Need() != 0 {
			t.Errorf("%s: the group's first trial: learning %v, need %d", pol.name, learner.Learning(), learner.Need())
		}
		_, _, wait := b.Need(needs.Request{ID: 4, Name: "second", Group: "new", Auto: true})
		if want := `waits for "first" to measure the group's ` + pol.of(2).Resource; wait != want {
			t.Errorf("%s: sibling waits %q, want %q", pol.name, wait, want)
		}
	}
}

// A learner teaches its group its peak plus 5% once its memory stayed flat for
// LearnSettle, or at its end when that comes sooner; one that held nothing teaches nothing,
// and the group's next trial learns instead.
func TestLearning(t *testing.T) {
	for _, pol := range policies {
		for _, tc := range []struct {
			name  string
			peak  uint64
			flat  bool // stays flat for LearnSettle before it ends
			learn uint64
		}{
			{"settled", 6 * gib, true, needs.LearnedNeed(6 * gib)},
			{"ended sooner", 500 * mib, false, 576 * mib}, // 500 + 5%, in 64 MiB steps
			{"held nothing", 0, false, 0},
		} {
			hist := store{}
			b := needs.New(pol.of(2), hist)
			req := needs.Request{ID: 1, Name: "l", Group: "g", Auto: true}
			l := admitted(t, b, req)
			l.Provision(gib)
			l.Grew(tc.peak, true, t0)
			if tc.flat {
				b.Settle(t0.Add(needs.LearnSettle))
				if l.Learning() || l.Reserve() != tc.learn {
					t.Errorf("%s, %s: after settling: learning %v, reserves %d MiB; want its learned %d MiB", pol.name, tc.name, l.Learning(), l.Reserve()/mib, tc.learn/mib)
				}
			}
			b.End(l)
			got, ok := hist.Learned("g")
			if got != tc.learn || ok != (tc.learn > 0) {
				t.Errorf("%s, %s: learned %d MiB (%v), want %d MiB", pol.name, tc.name, got/mib, ok, tc.learn/mib)
			}
			next := needs.Request{ID: 2, Name: "next", Group: "g", Auto: true}
			if need, learning, _ := b.Need(next); learning != (tc.learn == 0) || need != tc.learn {
				t.Errorf("%s, %s: next trial: need %d MiB, learning %v", pol.name, tc.name, need/mib, learning)
			}
		}
	}
}

// A trial that went beyond what it reserved goes again on twice what it showed, rounded up
// to its resource's step and at most what one trial can have, and its siblings need what
// it showed; one whose need was not measured gets twice its need; each such requeue counts
// against oom-retries.
func TestRequeueUnderDeclared(t *testing.T) {
	for _, pol := range policies {
		step := pol.of(2).Step
		for _, tc := range []struct {
			name     string
			declared uint64
			measured uint64
			most     uint64
			want     uint64
		}{
			{"grown from what it showed", 2 * gib, 3*gib + 128*mib, 80 * gib, pol.grow(2*gib, 3*gib+128*mib)},
			{"rounded up to the step", 2 * gib, 3*gib + 1, 80 * gib, roundUp(pol.grow(2*gib, 3*gib+1), step)},
			{"at least twice its need", 2 * gib, 2*gib + 256*mib, 80 * gib, pol.grow(2*gib, 2*gib+256*mib)},
			{"at most what one trial can have", 2 * gib, 30 * gib, 40 * gib, 40 * gib},
			{"not measured: twice its need", 2 * gib, 0, 80 * gib, 4 * gib},
			{"not measured, no need: twice the step", 0, 0, 80 * gib, 2 * step},
		} {
			b := needs.New(pol.of(2), nil)
			req := needs.Request{ID: 1, Name: "liar", Group: "g", Memory: tc.declared}
			tr := admitted(t, b, req)
			need, n, err := b.Requeue(tr, tc.measured, tc.most)
			if err != nil || n != 1 || need != tc.want {
				t.Errorf("%s, %s: Requeue = %d MiB, %d, %v; want %d MiB, 1", pol.name, tc.name, need/mib, n, err, tc.want/mib)
			}
			if again, _, _ := b.Need(req); again != need {
				t.Errorf("%s, %s: admitted again with %d MiB, want the raised %d MiB", pol.name, tc.name, again/mib, need/mib)
			}
			sibling, _, _ := b.Need(needs.Request{ID: 2, Name: "sibling", Group: "g", Memory: tc.declared})
			if want := max(tc.declared, needs.LearnedNeed(tc.measured)); sibling != want {
				t.Errorf("%s, %s: sibling needs %d MiB, want %d MiB", pol.name, tc.name, sibling/mib, want/mib)
			}
		}
	}
}

func roundUp(n, step uint64) uint64 { return (n + step - 1) / step * step }

// Past oom-retries, a trial that keeps going beyond its need fails, saying in its
// resource's words how it ran out and what was measured.
func TestRequeueRetriesSpent(t *testing.T) {
	for _, pol := range policies {
		p := pol.of(1)
		b := needs.New(p, nil)
		req := needs.Request{ID: 1, Name: "liar", Memory: gib}
		if _, _, err := b.Requeue(admitted(t, b, req), 2*gib, 80*gib); err != nil {
			t.Fatal(err)
		}
		_, n, err := b.Requeue(admitted(t, b, req), 5*gib, 80*gib)
		want := p.RanOut + " 2 times (oom-retries: 1); " + strings.Replace(p.Measured, "%s", "5.0 GiB", 1)
		if err == nil || err.Error() != want || n != 1 {
			t.Errorf("%s: error %v (%d requeues), want %q", pol.name, err, n, want)
		}
	}
}

// A trial that ran out within what it reserved is a neighbour's victim: it goes again on
// the same need (no less than it held), uncharged, up to VictimRetries times; then it fails
// naming the others' excess. With oom-retries: 0 no trial is requeued at all.
func TestRequeueVictim(t *testing.T) {
	for _, pol := range policies {
		p := pol.of(1)
		b := needs.New(p, nil)
		req := needs.Request{ID: 1, Name: "honest", Memory: 4 * gib}
		for i := 1; i <= needs.VictimRetries; i++ {
			need, n, err := b.Requeue(admitted(t, b, req), 3*gib, 80*gib)
			if err != nil || need != 4*gib || n != i {
				t.Fatalf("%s: victim %d: %d MiB, %d, %v; want its own 4 GiB", pol.name, i, need/mib, n, err)
			}
		}
		_, _, err := b.Requeue(admitted(t, b, req), 3*gib, 80*gib)
		want := p.RanOut + " 4 times within its need of 4.0 GiB: other trials use more " + p.Resource + " than they declared"
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", pol.name, err, want)
		}
		// Its charged retry is still there: going beyond its need now is requeued.
		if need, _, err := b.Requeue(admitted(t, b, req), 5*gib, 80*gib); err != nil || need != pol.grow(4*gib, 5*gib) {
			t.Errorf("%s: beyond its need after being a victim: %d MiB, %v; want %d MiB", pol.name, need/mib, err, pol.grow(4*gib, 5*gib)/mib)
		}

		none := needs.New(pol.of(0), nil)
		if _, _, err := none.Requeue(admitted(t, none, req), 3*gib, 80*gib); err == nil {
			t.Errorf("%s: oom-retries 0: requeued", pol.name)
		}
	}
}

// A learner that runs out teaches nothing from what it held: its group's next trial needs
// what its end showed (learned at once), and the learner goes again as no learner.
func TestRequeueLearner(t *testing.T) {
	for _, pol := range policies {
		hist := store{}
		b := needs.New(pol.of(2), hist)
		req := needs.Request{ID: 1, Name: "l", Group: "g", Auto: true}
		l := admitted(t, b, req)
		l.Grew(5*gib, true, t0)
		need, _, err := b.Requeue(l, 6*gib, 80*gib)
		if err != nil || need != pol.grow(l.Reserve(), 6*gib) || l.Learning() {
			t.Fatalf("%s: Requeue = %d MiB, %v, learning %v", pol.name, need/mib, err, l.Learning())
		}
		b.End(l)
		if got, _ := hist.Learned("g"); got != needs.LearnedNeed(6*gib) {
			t.Errorf("%s: learned %d MiB, want %d MiB from what its end showed", pol.name, got/mib, needs.LearnedNeed(6*gib)/mib)
		}
		if again, learning, _ := b.Need(req); again != need || learning {
			t.Errorf("%s: the learner again: %d MiB, learning %v", pol.name, again/mib, learning)
		}
	}
}

// A raised need settles to the trial's own peak plus 5% once its memory stayed flat: it
// reserves that, its results report it, and its next requeue starts from it. A peak that
// is a share of a device's growth is no figure of its own: such a need stays as raised.
func TestRaisedNeedSettles(t *testing.T) {
	for _, pol := range policies {
		for _, own := range []bool{true, false} {
			b := needs.New(pol.of(2), nil)
			req := needs.Request{ID: 1, Name: "t", Group: "g", Memory: 2 * gib}
			if _, _, err := b.Requeue(admitted(t, b, req), 3*gib, 80*gib); err != nil {
				t.Fatal(err)
			}
			raised := pol.grow(2*gib, 3*gib)
			tr := admitted(t, b, req) // on its raised need
			tr.Grew(4*gib, own, t0)
			if got := b.Final(tr); own && got != needs.LearnedNeed(4*gib) || !own && got != raised {
				t.Errorf("%s, own %v: while growing, reports %d MiB", pol.name, own, got/mib)
			}
			b.Settle(t0.Add(needs.LearnSettle))
			want := raised
			if own {
				want = needs.LearnedNeed(4 * gib)
			}
			again, _, _ := b.Need(req)
			if tr.Reserve() != want || b.Final(tr) != want || again != want {
				t.Errorf("%s, own %v: settled: reserves %d MiB, reports %d MiB, goes again on %d MiB; want %d MiB",
					pol.name, own, tr.Reserve()/mib, b.Final(tr)/mib, again/mib, want/mib)
			}
		}
	}
}
