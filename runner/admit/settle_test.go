package admit

import (
	"testing"
	"time"

	"github.com/runall/runall/runner/needs"
)

// A trial requeued after running out of memory goes again on twice what it showed; once its
// memory has stopped growing, its need settles to its own peak plus the margin: it reserves
// no more than that, its results say so, and its next requeue starts from it.
func TestRequeuedNeedSettles(t *testing.T) {
	w := newWorld(80 * gi)
	p, _, _ := place(w.a, mem(1, 4*gi))
	w.start(p, 10, 11, 5*gi, true)
	w.tick(100 * time.Millisecond)
	need, _, err := w.a.Requeue(p, OOM{Tried: gi})
	if err != nil || need != 12*gi {
		t.Fatalf("Requeue = %d MiB, %v; want twice the 6 GiB it showed", need>>20, err)
	}
	w.a.Release(p)
	w.exit(11)

	q, why, _ := place(w.a, mem(1, 4*gi))
	if q == nil || q.Need != 12*gi {
		t.Fatalf("requeued trial placed with %+v (%s), want a need of 12 GiB", q, why)
	}
	w.start(q, 20, 21, 7*gi, true)
	w.tick(100 * time.Millisecond)
	if got := w.a.Need(q); got != learnedNeed(7*gi) {
		t.Errorf("while growing: need for the results %d MiB, want its peak plus the margin, %d MiB", got>>20, learnedNeed(7*gi)>>20)
	}
	if q.entry.Reserve() != 12*gi {
		t.Errorf("while growing it reserves %d MiB, want the raised 12 GiB until it settles", q.entry.Reserve()>>20)
	}
	w.tick(learnSettle)
	if want := learnedNeed(7 * gi); q.entry.Reserve() != want || w.a.Need(q) != want || w.a.raisedNeed(1) != want {
		t.Errorf("settled: reserves %d MiB, reports %d MiB, requeues from %d MiB; want %d MiB each",
			q.entry.Reserve()>>20, w.a.Need(q)>>20, w.a.raisedNeed(1)>>20, want>>20)
	}
	// A sibling of its group is not admitted below what it settled at.
	if g := w.a.groupNeed(""); g < learnedNeed(6*gi) {
		t.Errorf("group need %d MiB, want at least the 6 GiB the failure showed, padded", g>>20)
	}
}

// A sibling admitted on the need its group's failure showed settles to its own peak too.
func TestSiblingOfRaisedGroupSettles(t *testing.T) {
	w := newWorld(80 * gi)
	req := func(id int) Request {
		return Request{Request: needs.Request{ID: id, Name: "t", Group: "sweep", Memory: 2 * gi}}
	}
	p, _, _ := place(w.a, req(1))
	w.start(p, 10, 11, 11*gi, true)
	w.tick(100 * time.Millisecond)
	if _, _, err := w.a.Requeue(p, OOM{Tried: gi}); err != nil {
		t.Fatal(err)
	}
	w.a.Release(p)
	w.exit(11)
	s, why, _ := place(w.a, req(2))
	if s == nil || s.Need != learnedNeed(12*gi) {
		t.Fatalf("sibling placed with %+v (%s), want its group's raised need", s, why)
	}
	w.start(s, 20, 21, 3*gi, true)
	w.tick(100 * time.Millisecond)
	w.tick(learnSettle)
	if got := w.a.Need(s); got != learnedNeed(3*gi) || s.entry.Reserve() != got {
		t.Errorf("sibling using 3 GiB: need %d MiB, reserve %d MiB; want its own peak plus the margin", got>>20, s.entry.Reserve()>>20)
	}
}

// A learner's results report the need it taught its group, not its provisional reservation.
func TestLearnerReportsLearnedNeed(t *testing.T) {
	w := newWorld(80 * gi)
	l, _, _ := place(w.a, Request{Request: needs.Request{ID: 1, Name: "l", Group: "g", Auto: true}})
	w.start(l, 10, 11, 20*gi, true)
	w.tick(100 * time.Millisecond)
	if l.entry.Reserve() != 20*gi { // a quarter of 80 GiB
		t.Fatalf("provisional reservation %d MiB, want 20 GiB", l.entry.Reserve()>>20)
	}
	if got := w.a.Need(l); got != learnedNeed(20*gi) {
		t.Errorf("before settling: need %d MiB, want %d MiB", got>>20, learnedNeed(20*gi)>>20)
	}
	w.tick(learnSettle)
	learned, _ := w.hist.Learned("g")
	if got := w.a.Need(l); got != learned || learned != learnedNeed(20*gi) {
		t.Errorf("settled: need %d MiB, learned %d MiB; want both %d MiB", got>>20, learned>>20, learnedNeed(20*gi)>>20)
	}
}

// Where the driver tells no trial's processes apart, a requeued trial's need settles only
// from a peak it reached alone on its device: a share of the device's growth beside others
// is no figure of its own.
func TestRequeuedSettlesOnlyOnItsOwnPeak(t *testing.T) {
	for _, alone := range []bool{true, false} {
		w := newWorld(80 * gi)
		w.a.meter.pids = PIDsNone
		p, _, _ := place(w.a, mem(1, 4*gi))
		w.use(0, 6*gi)
		w.tick(100 * time.Millisecond)
		if _, _, err := w.a.Requeue(p, OOM{Held: 5 * gi, Tried: gi}); err != nil {
			t.Fatal(err)
		}
		w.a.Release(p)
		w.use(0, 0)
		w.tick(100 * time.Millisecond)
		used := uint64(0)
		if !alone {
			place(w.a, mem(2, 4*gi))
			used = 4 * gi
		}
		q, why, _ := place(w.a, mem(1, 4*gi))
		if q == nil {
			t.Fatal(why)
		}
		w.use(0, used+7*gi)
		w.tick(100 * time.Millisecond)
		w.tick(learnSettle)
		got := w.a.Need(q)
		switch {
		case alone && got != learnedNeed(7*gi):
			t.Errorf("alone: settled need %d MiB, want %d MiB", got>>20, learnedNeed(7*gi)>>20)
		case !alone && got != q.Need:
			t.Errorf("beside another: need %d MiB, want the raised %d MiB: a share of the device's growth is no peak of its own", got>>20, q.Need>>20)
		}
	}
}
