package sharing

import (
	"strings"
	"testing"
)

// TestUnbelievableRatesJudgeNothing: a progress that jumps past its total, goes backwards,
// or implies more than MaxOverKind times its kind's rate alone or MaxRate steps a second is
// not a rate: the GPU's mix is not judged by it, and it is said once (issue 42, point 4).
func TestUnbelievableRatesJudgeNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Rate
		why  string
	}{
		{"past its total", Rate{PerSecond: 8, Steps: 500, Total: 100}, "jumps past its total"},
		{"backwards", Rate{PerSecond: 8, Steps: 20, From: 90}, "went back"},
		{"a million a second", Rate{PerSecond: 2e6, Steps: 4e6}, "more than 1e+06 a second"},
		{"a hundred times its kind", Rate{PerSecond: 1001, Steps: 2002}, "more than 100 times its kind's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := New(Options{})
			ctl.Started(0, "0", Trial{ID: "a", Kind: "k"})
			ctl.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 10, Steps: 20})
			ctl.Started(sec(2), "0", Trial{ID: "b", Kind: "k"})
			ctl.Measured(sec(4), "0", Rate{Trial: "a", PerSecond: 8, Since: sec(2), Steps: 36})
			r := c.r
			r.Trial, r.Since = "b", sec(2)
			got := ctl.Measured(sec(4), "0", r)
			if len(got) != 1 || got[0].Action != Ignore || !strings.Contains(got[0].Why, c.why) {
				t.Fatalf("b's rate %+v: %v, want it ignored (%s)", r, got, c.why)
			}
			if again := ctl.Measured(sec(6), "0", Rate{Trial: "b", PerSecond: 2e7, Since: sec(4), Steps: 5e7}); len(again) != 0 {
				t.Errorf("said twice: %v", again)
			}
			if d := ctl.MayAdmit(sec(6), "0", Trial{ID: "c", Kind: "k"}); d.Action != Wait || !strings.Contains(d.Why, "measuring") {
				t.Errorf("the mix was judged by a rate that is not one: %v", d)
			}
			if f := ctl.Figures(); f.Trials[1].Steps > 0 {
				t.Errorf("b's steps %v were taken from a figure that is not one", f.Trials[1].Steps)
			}
		})
	}
}

// TestMatrixJudgedTrialByTrial: trials of one kind that run at different speeds alone do not
// borrow the first one's rate alone: a trial without its own is judged only once measured
// alone, and the figures give it no slowdown it was not measured to have.
func TestMatrixJudgedTrialByTrial(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "fast", Kind: "m"})
	c.Measured(sec(2), "0", Rate{Trial: "fast", PerSecond: 100, Steps: 200})
	c.Started(0, "1", Trial{ID: "slow", Kind: "m"})
	c.Measured(sec(2), "1", Rate{Trial: "slow", PerSecond: 10, Steps: 20})
	if d := c.MayAdmit(sec(3), "0", Trial{ID: "third", Kind: "m"}); d.Action != Wait || !strings.Contains(d.Why, "rate alone is not known") {
		t.Errorf("a trial of a kind whose trials differ in speed: %v, want it to wait to be measured alone", d)
	}

	c = New(Options{})
	c.Started(0, "0", Trial{ID: "slow", Kind: "m"})
	c.Measured(sec(2), "0", Rate{Trial: "slow", PerSecond: 10, Steps: 20})
	c.Started(sec(2), "0", Trial{ID: "fast", Kind: "m"})
	c.Measured(sec(4), "0", Rate{Trial: "slow", PerSecond: 10, Since: sec(2), Steps: 40})
	c.Measured(sec(4), "0", Rate{Trial: "fast", PerSecond: 60, Since: sec(2), Steps: 120})
	f := c.Figures()
	if f.Trials[1].Alone != 0 || f.Trials[1].Slowdown != 0 {
		t.Errorf("a trial that ran 6x its kind's rate alone, beside another: figures %+v, want no rate alone borrowed", f.Trials[1])
	}
}

// TestSummaryOfASweepThatNeverShared: trials that each had a GPU to themselves ran one at a
// time, whatever their rates' noise says.
func TestSummaryOfASweepThatNeverShared(t *testing.T) {
	c := New(Options{})
	c.Started(0, "0", Trial{ID: "a", Kind: "k"})
	c.Measured(sec(2), "0", Rate{Trial: "a", PerSecond: 10, Steps: 20})
	c.Measured(sec(10), "0", Rate{Trial: "a", PerSecond: 9, Since: sec(8), Steps: 100})
	c.Left(sec(11), "0", "a")
	c.Started(sec(11), "0", Trial{ID: "b", Kind: "k"})
	c.Measured(sec(21), "0", Rate{Trial: "b", PerSecond: 9, Since: sec(11), Steps: 90})
	c.Left(sec(22), "0", "b")
	if got, want := c.Figures().Summary(c.End()), "its trials never shared a GPU: sharing ran this sweep one trial at a time"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
