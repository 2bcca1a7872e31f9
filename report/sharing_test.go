package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// TestSharing (issue 36, point 3): the report (and so the live page) draws what packing by
// progress measured: what it bought, each GPU's trials over time, each trial's rates and
// slowdown, the decisions; no section for a run that shares by memory.
func TestSharing(t *testing.T) {
	start := time.Unix(1000, 0)
	run := &results.Run{StartedAt: start, FinishedAt: start.Add(10 * time.Second), Tasks: []results.Task{{Name: "a", Status: results.StatusOK}},
		GPUSharing: &results.Sharing{
			Trials:    []results.SharingTrial{{Trial: "a", Alone: 20, AloneFrom: "measured", Shared: 10, Slowdown: 2, Steps: 100}},
			GPUs:      []results.SharingGPU{{GPU: "0", Counts: []results.SharingCount{{At: 0, Trials: 1}, {At: 2.5, Trials: 2}, {At: 9, Trials: 0}}}},
			Decisions: []results.SharingDecision{{At: 4.5, GPU: "0", Action: "lower", Trials: 2, Line: "gpu 0: 2 trials ran 0.80 trials' worth"}},
			Summary:   "sharing ran this sweep 1.6x faster than one trial at a time would have (measured rates)",
		}}
	var b bytes.Buffer
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<h2>GPU sharing by progress</h2>",
		"sharing ran this sweep 1.6x faster than one trial at a time would have (measured rates).",
		"at most 2 at once (1 at 0 s, 2 at 2 s, 0 at 9 s)",
		"<tr><td>a</td><td class=\"num\">20</td><td>measured</td><td class=\"num\">10</td><td class=\"num\">2</td><td class=\"num\">100</td></tr>",
		"<li>4.5 s: gpu 0: 2 trials ran 0.80 trials&#39; worth</li>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not show %q", want)
		}
	}
	run.GPUSharing = nil
	b.Reset()
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "id=\"sharing\"") {
		t.Error("a run that shares by memory has a sharing section")
	}
}
