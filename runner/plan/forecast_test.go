package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/earlystop"
)

// TestForecastKeys: early-stop method forecast takes grace, max (required), min-chance in
// (0, 0.5] and families; another method's key, or its keys under another method, is refused
// at its line and column, and check's message says what to do.
func TestForecastKeys(t *testing.T) {
	for _, tc := range []struct {
		early   string
		problem string // "" for none
	}{
		{"{method: forecast, max: 20}", ""},
		{"{method: forecast, grace: 3, max: 20, min-chance: 0.5, families: [pow3, mmf]}", ""},
		{"{method: forecast, max: 20, min-chance: 0.01, pause-below: 1}", ""},
		{"{method: forecast, max: 20, min-chance: 0.1, pause-below: 0.1}", "3:60: early-stop: pause-below: 0.1 is not above min-chance 0.1: no trial would be paused"},
		{"{method: forecast, max: 20, pause-below: 1.5}", "3:56: early-stop: pause-below: want a number from 0 to 1"},
		{"{method: asha, pause-below: 0.3}", "3:30: early-stop: pause-below: is not a key of asha"},
		{"{method: forecast, grace: 3}", "3:15: early-stop: forecast needs max: the trials' last step"},
		{"{method: forecast, grace: 5, max: 5}", "3:44: early-stop: max: 5 is not above grace 5"},
		{"{method: forecast, max: 20, min-chance: 0}", "3:55: early-stop: min-chance: want a number from 0 to 0.5"},
		{"{method: forecast, max: 20, min-chance: 0.6}", "3:55: early-stop: min-chance: want a number from 0 to 0.5"},
		{"{method: forecast, max: 20, min-chance: lots}", "3:55: early-stop: min-chance: want a number"},
		{"{method: forecast, max: 20, families: [pow3, pow9]}", `3:60: early-stop: families: "pow9" is not a curve family: want some of pow3, ilog2`},
		{"{method: forecast, max: 20, reduction: 3}", "3:43: early-stop: reduction: is not a key of forecast, which takes grace, max, min-chance, pause-below, families"},
		{"{method: forecast, max: 20, min-trials: 3}", "3:43: early-stop: min-trials: is not a key of forecast"},
		{"{method: asha, min-chance: 0.1}", "3:30: early-stop: min-chance: is not a key of asha"},
		{"{method: median, families: [pow3]}", "3:32: early-stop: families: is not a key of median"},
		{"{method: sha, max: 9, min-chance: 0.1}", "3:37: early-stop: min-chance: is not a key of sha"},
	} {
		text := "config:\n  objective: {metric: val_accuracy, mode: max}\n  early-stop: " + tc.early + "\ntasks:\n  - name: sweep\n    parallel-tasks: [{cmd: train}]\n"
		p, err := loadYAML(t, text, LoadOptions{})
		switch {
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("early-stop %s: got %v, want %q", tc.early, err, tc.problem)
		case tc.problem == "" && err != nil:
			t.Errorf("early-stop %s: %v", tc.early, err)
		case tc.problem == "":
			c := p.Tasks[0].EarlyStop
			if c.Method != earlystop.Forecast || c.MinChance <= 0 || c.Max != 20 {
				t.Errorf("early-stop %s: read as %+v", tc.early, c)
			}
			if strings.Contains(tc.early, "families") && !slices.Equal(c.Families, []string{"pow3", "mmf"}) {
				t.Errorf("early-stop %s: families %v", tc.early, c.Families)
			}
			want := max(0.2, c.MinChance) // the default, or none paused when min-chance is above it
			if strings.Contains(tc.early, "pause-below: 1") {
				want = 1
			}
			if c.PauseBelow != want {
				t.Errorf("early-stop %s: pause-below %v", tc.early, c.PauseBelow)
			}
		}
	}
}

// TestForecastOrderShuffled: a block under forecast, whose incumbent is whichever trial got
// to max first, starts its trials in the shuffled order by default, as under asha; its own
// order wins.
func TestForecastOrderShuffled(t *testing.T) {
	for _, tc := range []struct{ order, want string }{{"", "shuffled"}, {"    order: file\n", "file"}} {
		text := "config:\n  objective: {metric: acc, mode: max}\ntasks:\n  - name: sweep\n" + tc.order +
			"    early-stop: {method: forecast, max: 9}\n    parallel-tasks: [{cmd: a}, {cmd: b}]\n"
		p, err := loadYAML(t, text, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(p.Tasks[0].Order); got != tc.want {
			t.Errorf("order %q: got %q, want %q", tc.order, got, tc.want)
		}
	}
}
