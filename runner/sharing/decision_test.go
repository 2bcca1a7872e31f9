package sharing

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// TestDecisionsHeavyPair walks one GPU through a probe that lowers its throughput: alone,
// a second admitted, a rate from before the change ignored, the drop judged with its
// figures, the last one paused, and the same kind refused on that mix afterwards.
func TestDecisionsHeavyPair(t *testing.T) {
	c := New(Options{})
	h1 := Trial{ID: "h1", Kind: "heavy", CanPause: true}
	h2 := Trial{ID: "h2", Kind: "heavy", CanPause: true}
	if d := c.MayAdmit(0, "0", h1); d.Action != Admit {
		t.Fatalf("an empty GPU: %v", d)
	}
	c.Started(0, "0", h1)
	if d := c.MayAdmit(sec(1), "0", h2); d.Action != Wait || !strings.Contains(d.Why, "measuring") {
		t.Errorf("before h1 is measured: %v", d)
	}
	ds := c.Measured(sec(2), "0", Rate{Trial: "h1", PerSecond: 2, Since: 0, Steps: 4})
	if len(ds) != 1 || ds[0].Action != Alone || ds[0].After != 1 {
		t.Fatalf("h1 measured alone: %v", ds)
	}
	if d := c.MayAdmit(sec(2), "0", h2); d.Action != Admit {
		t.Fatalf("h2 of a kind measured alone, onto a judged mix: %v", d)
	}
	c.Started(sec(3), "0", h2)
	if ds := c.Measured(sec(4), "0", Rate{Trial: "h1", PerSecond: 2, Since: sec(2), Steps: 8}); ds != nil {
		t.Errorf("a rate from before the mix changed judged it: %v", ds)
	}
	c.Measured(sec(5), "0", Rate{Trial: "h1", PerSecond: 0.95, Since: sec(3), Steps: 10})
	ds = c.Measured(sec(5), "0", Rate{Trial: "h2", PerSecond: 0.95, Since: sec(3), Steps: 2})
	if len(ds) != 1 {
		t.Fatalf("both measured: %v", ds)
	}
	d := ds[0]
	if d.Action != Lower || !d.Pause || d.Trial != "h2" || d.Before != 1 || math.Abs(d.After-0.95) > 1e-9 || d.Trials != 2 {
		t.Errorf("the drop: %+v", d)
	}
	if s := d.String(); !strings.Contains(s, "gpu 0: 2 trials ran 0.95 trials' worth against 1.00 before h2 joined (0.95x): one fewer; pausing h2 at its next copy") ||
		!strings.Contains(s, "h1 0.95/s (alone 2/s, 2.11x slower)") {
		t.Errorf("said as %q", s)
	}
	c.Left(sec(8), "0", "h2")
	if d := c.MayAdmit(sec(8), "0", h2); d.Action != Wait || !strings.Contains(d.Why, "lowered this mix's throughput before (0.95x)") {
		t.Errorf("h2 again beside h1: %v", d)
	}
	c.Left(sec(20), "0", "h1")
	if d := c.MayAdmit(sec(20), "0", h2); d.Action != Admit {
		t.Errorf("h2 onto the emptied GPU: %v", d)
	}
}

// TestLowerWithoutCheckpoint: a trial that cannot pause runs on; the GPU takes no more.
func TestLowerWithoutCheckpoint(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "a", Kind: "k"})
	c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 4, Since: 0})
	c.Started(sec(2), "0", Trial{ID: "b", Kind: "k"})
	c.Measured(sec(4), "0", Rate{Trial: "a", PerSecond: 1.5, Since: sec(2)})
	ds := c.Measured(sec(4), "0", Rate{Trial: "b", PerSecond: 1.5, Since: sec(2)})
	if len(ds) != 1 || ds[0].Action != Lower || ds[0].Pause || !strings.Contains(ds[0].Why, "b has no checkpoint: it runs on") {
		t.Fatalf("got %v", ds)
	}
	if d := c.MayAdmit(sec(5), "0", Trial{ID: "c", Kind: "other", Alone: 3}); d.Action != Wait || !strings.Contains(d.Why, "lowered its throughput (0.75x)") {
		t.Errorf("after a drop the GPU took another: %v", d)
	}
}

// TestMarginKeeps: a gain within the margin keeps the trials and takes no more; one above
// it opens the GPU to one more.
func TestMarginKeeps(t *testing.T) {
	for _, tt := range []struct {
		shared float64
		want   Action
	}{{0.52, Keep}, {0.6, Open}} {
		c := New(Options{Margin: 0.1})
		c.Started(0, "0", Trial{ID: "a", Kind: "k"})
		c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 1, Since: 0})
		c.Started(sec(2), "0", Trial{ID: "b", Kind: "k"})
		c.Measured(sec(4), "0", Rate{Trial: "a", PerSecond: tt.shared, Since: sec(2)})
		ds := c.Measured(sec(4), "0", Rate{Trial: "b", PerSecond: tt.shared, Since: sec(2)})
		if len(ds) != 1 || ds[0].Action != tt.want {
			t.Errorf("shared at %v: %v, want %v", tt.shared, ds, tt.want)
		}
		admit := c.MayAdmit(sec(5), "0", Trial{ID: "c", Kind: "k"}).Action == Admit
		if admit != (tt.want == Open) {
			t.Errorf("shared at %v: a third admitted %v", tt.shared, admit)
		}
	}
}

// TestRateAloneKnown: a trial whose rate alone nobody knows waits for a GPU of its own; one
// that history knows, or whose kind was measured alone, may join.
func TestRateAloneKnown(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "a", Kind: "k"})
	c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 4, Since: 0})
	if d := c.MayAdmit(sec(2), "0", Trial{ID: "x", Kind: "new"}); d.Action != Wait || !strings.Contains(d.Why, "x's rate alone is not known yet") {
		t.Errorf("unknown rate alone: %v", d)
	}
	for _, tr := range []Trial{{ID: "y", Kind: "new", Alone: 2}, {ID: "z", Kind: "k"}} {
		if d := c.MayAdmit(sec(2), "0", tr); d.Action != Admit {
			t.Errorf("%s: %v", tr.ID, d)
		}
	}
}

// TestSaturatedTakesNoUntried: a GPU whose utilisation says it is busy all the time takes no
// trial never tried with its mix.
func TestSaturatedTakesNoUntried(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "a", Kind: "k"})
	c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 4, Since: 0})
	c.Utilisation(sec(2), "0", 0.99)
	if d := c.MayAdmit(sec(2), "0", Trial{ID: "b", Kind: "k"}); d.Action != Wait || !strings.Contains(d.Why, "busy 99%") {
		t.Errorf("saturated: %v", d)
	}
	c.Utilisation(sec(3), "0", 0.4)
	if d := c.MayAdmit(sec(3), "0", Trial{ID: "b", Kind: "k"}); d.Action != Admit {
		t.Errorf("40%% busy: %v", d)
	}
}

// TestFiguresAndSummary: per trial rate alone, shared and slowdown; per GPU the trials over
// time; the summary's speed-up from measured rates.
func TestFiguresAndSummary(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "a", Kind: "k"})
	c.Measured(sec(10), "0", Rate{Trial: "a", PerSecond: 10, Since: 0, Steps: 100})
	c.Started(sec(10), "0", Trial{ID: "b", Kind: "k"})
	c.Measured(sec(20), "0", Rate{Trial: "a", PerSecond: 8, Since: sec(10), Steps: 180})
	c.Measured(sec(20), "0", Rate{Trial: "b", PerSecond: 8, Since: sec(10), Steps: 80})
	c.Left(sec(20), "0", "a")
	c.Left(sec(20), "0", "b")
	f := c.Figures()
	want := []TrialFigures{
		{Trial: "a", Alone: 10, AloneFrom: FromMeasured, Shared: 8, Slowdown: 1.25, Steps: 180},
		{Trial: "b", Alone: 10, AloneFrom: FromKind, Shared: 8, Slowdown: 1.25, Steps: 80},
	}
	if !reflect.DeepEqual(f.Trials, want) {
		t.Errorf("trials %+v\nwant %+v", f.Trials, want)
	}
	counts := []Count{{0, 1}, {10, 2}, {20, 0}}
	if len(f.GPUs) != 1 || !reflect.DeepEqual(f.GPUs[0].Counts, counts) {
		t.Errorf("gpus %+v, want counts %v", f.GPUs, counts)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"rate_alone":10`, `"rate_alone_from":"kind"`, `"rate_shared":8`, `"slowdown":1.25`, `"trials_over_time":[{"at":0,"trials":1}`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("figures as results.json would keep them lack %s: %s", key, b)
		}
	}
	// 260 steps at 10/s alone is 26 s one at a time, done in 20 s: 1.3x.
	if got := f.Summary(c.End()); got != "sharing ran this sweep 1.3x faster than one trial at a time would have (measured rates)" {
		t.Errorf("summary %q", got)
	}
	if got := (Figures{Trials: []TrialFigures{{Trial: "x", Steps: 5}}, GPUs: f.GPUs}).Summary(c.End()); got != "" {
		t.Errorf("a rate alone unknown: %q", got)
	}
}

// TestDeterministic: the same measurements give the same decisions.
func TestDeterministic(t *testing.T) {
	w := timeSlice{switchCost: 0.05}
	var logs [2][]Decision
	for i := range logs {
		c := New(Options{MinWindow: time.Second})
		newSim(w, byProgress{c: c}, 2, 32, sweepOf(24, light, medium, heavy)).run(t)
		logs[i] = c.Decisions()
	}
	if len(logs[0]) == 0 || !reflect.DeepEqual(logs[0], logs[1]) {
		t.Errorf("two runs of one sweep decided differently (%d and %d decisions)", len(logs[0]), len(logs[1]))
	}
}

// TestNoProgressJudgesNothing: a window with no progress (a trial still starting), one too
// short, or a trial told twice, changes nothing.
func TestNoProgressJudgesNothing(t *testing.T) {
	c := New(Options{MinWindow: time.Second})
	a := Trial{ID: "a", Kind: "k"}
	c.Started(0, "0", a)
	c.Started(0, "0", a)
	if ds := c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 0, Since: 0}); ds != nil {
		t.Errorf("no progress judged: %v", ds)
	}
	if ds := c.Measured(sec(2.5), "0", Rate{Trial: "a", PerSecond: 3, Since: sec(2)}); ds != nil {
		t.Errorf("a window under MinWindow judged: %v", ds)
	}
	ds := c.Measured(sec(4), "0", Rate{Trial: "a", PerSecond: 3, Since: sec(2)})
	if len(ds) != 1 || ds[0].Action != Alone || ds[0].Trials != 1 {
		t.Errorf("a's first rate: %v", ds)
	}
}

// TestModelsLearnApart: a drop learned on one GPU keeps the same step off every GPU of its
// model, not off a GPU of another model.
func TestModelsLearnApart(t *testing.T) {
	c := New(Options{})
	c.Model("2", "other")
	for _, g := range []string{"0", "1", "2"} {
		c.Started(0, g, Trial{ID: "a" + g, Kind: "heavy"})
		c.Measured(sec(2), g, Rate{Trial: "a" + g, PerSecond: 2, Since: 0})
	}
	c.Started(sec(2), "0", Trial{ID: "b0", Kind: "heavy"})
	c.Measured(sec(4), "0", Rate{Trial: "a0", PerSecond: 0.9, Since: sec(2)})
	if ds := c.Measured(sec(4), "0", Rate{Trial: "b0", PerSecond: 0.9, Since: sec(2)}); len(ds) != 1 || ds[0].Action != Lower {
		t.Fatalf("the probe on gpu 0: %v", ds)
	}
	for g, want := range map[string]Action{"1": Wait, "2": Admit} {
		if d := c.MayAdmit(sec(5), g, Trial{ID: "c" + g, Kind: "heavy"}); d.Action != want {
			t.Errorf("gpu %s: %v, want %v", g, d, want)
		}
	}
}

// TestKnownGainAdmitsUnmeasured: after a trial leaves, a GPU whose mix is not yet measured
// again takes one more of a kind that raised that very mix's throughput before, without
// waiting to measure it; a kind never tried with it waits.
func TestKnownGainAdmitsUnmeasured(t *testing.T) {
	c := New(Options{})
	l := func(id string) Trial { return Trial{ID: id, Kind: "light", Alone: 10} }
	c.Started(0, "0", l("a"))
	c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 10, Since: 0})
	c.Started(sec(2), "0", l("b"))
	c.Measured(sec(4), "0", Rate{Trial: "a", PerSecond: 9, Since: sec(2)})
	if ds := c.Measured(sec(4), "0", Rate{Trial: "b", PerSecond: 9, Since: sec(2)}); len(ds) != 1 || ds[0].Action != Open {
		t.Fatalf("light pair: %v", ds)
	}
	c.Left(sec(5), "0", "b") // the mix is light×1 again, not yet measured
	if d := c.MayAdmit(sec(5), "0", l("c")); d.Action != Admit || !strings.Contains(d.Why, "raised this mix's throughput before (1.80x)") {
		t.Errorf("a light trial onto light×1, known to gain: %v", d)
	}
	if d := c.MayAdmit(sec(5), "0", Trial{ID: "h", Kind: "heavy", Alone: 5}); d.Action != Wait || !strings.Contains(d.Why, "measuring") {
		t.Errorf("a heavy trial, never tried with light×1: %v", d)
	}
}

// TestSummaryLevel: a sweep that sharing made neither faster nor slower, as far as one
// decimal shows, says so instead of "1.0x slower" (the heavy sweep's summary said that).
func TestSummaryLevel(t *testing.T) {
	for _, c := range []struct {
		alone, busy float64
		want        string
	}{
		{96.8, 97.0, "sharing ran this sweep as fast as one trial at a time would have (measured rates: 1.00x)"},
		{100, 104, "sharing ran this sweep as fast as one trial at a time would have (measured rates: 0.96x)"},
		{100, 120, "sharing ran this sweep 1.2x slower than one trial at a time would have (measured rates)"},
		{130, 100, "sharing ran this sweep 1.3x faster than one trial at a time would have (measured rates)"},
	} {
		if got := summaryOf(c.alone / c.busy); got != c.want {
			t.Errorf("speedup %.3f: %q, want %q", c.alone/c.busy, got, c.want)
		}
	}
}
