package hang

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/taskfile"
)

// TestVerdict: auto judges a trial by 5× its longest gap between real signs (never below
// the floor; its block's where it has none), and not at all while it showed output lines
// alone or nothing; a hand-set hang-after judges output lines and the start too; off none.
func TestVerdict(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := func(d float64) time.Time { return t0.Add(time.Duration(d * float64(time.Second))) }
	auto := taskfile.DefaultHang()
	auto.Floor = time.Second
	hand := auto
	hand.After = 4 * time.Second
	off := auto
	off.After = taskfile.HangOff
	start := auto
	start.AfterStart = 2 * time.Second
	type sign struct {
		kind string
		at   float64
	}
	for _, tc := range []struct {
		name  string
		rule  taskfile.Hang
		group time.Duration
		signs []sign
		now   float64
		hung  string // what the reason holds; "" not hung
	}{
		{"steady, then stopped", auto, 0, []sign{{signProgress, 1}, {signProgress, 2}, {signProgress, 3}}, 8.1, "no progress step for 5.1s"},
		{"stopped, within the rule", auto, 0, []sign{{signProgress, 1}, {signProgress, 2}, {signProgress, 3}}, 7.9, ""},
		{"slowed threefold: the longest gap grows", auto, 0, []sign{{signProgress, 1}, {signProgress, 2}, {signProgress, 5}, {signProgress, 8}}, 20, ""},
		{"a long evaluation below the rule", auto, 0, []sign{{signMetric, 1}, {signMetric, 3}, {signMetric, 5}}, 14, ""},
		{"floor", auto, 0, []sign{{signProgress, 1}, {signProgress, 1.1}}, 1.9, ""},
		{"new: its block's pace", auto, 2 * time.Second, []sign{{signProgress, 1}}, 11.1, "its block's longest gap"},
		{"new, no pace known: the floor", auto, 0, []sign{{signProgress, 1}}, 2.1, "hang-floor 1s"},
		{"output alone: auto does not judge", auto, 0, []sign{{signOutput, 1}}, 500, ""},
		{"no sign: auto does not judge", auto, 0, nil, 500, ""},
		{"output after progress is no sign", auto, 0, []sign{{signProgress, 1}, {signProgress, 2}, {signOutput, 7}}, 7.5, "no progress step"},
		{"by hand: output lines judged", hand, 0, []sign{{signOutput, 1}}, 5.1, "no output line for 4.1s"},
		{"by hand: the start judged", hand, 0, nil, 4.1, "no sign of life"},
		{"hang-after-start by hand: output lines judged", start, 0, []sign{{signOutput, 1}}, 3.1, "hang-after-start: 2s"},
		{"a checkpoint save is a sign", auto, 0, []sign{{signSaved, 1}, {signSaved, 2}}, 7.1, "no checkpoint save for 5.1s"},
		{"off", off, 0, []sign{{signProgress, 1}, {signProgress, 2}}, 500, ""},
	} {
		p := &pace{started: t0}
		for _, sg := range tc.signs {
			p.sign(sg.kind, s(sg.at))
		}
		got := p.verdict(tc.rule, tc.group, s(tc.now))
		if tc.hung == "" && got != "" || tc.hung != "" && !strings.Contains(got, tc.hung) {
			t.Errorf("%s: verdict %q, want one holding %q", tc.name, got, tc.hung)
		}
	}
}
