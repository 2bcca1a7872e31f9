package prune

import (
	"math"
	"strings"
	"testing"

	"github.com/runall/runall/runner/event"
)

// TestMisspelledMetricSaid: a rule whose metric no trial reports (acc where the trials print
// accuracy) is said to be off, with the name it likely meant, once a trial has reported a few
// steps of its other metrics, and again at the run's end; a rule whose metric is reported says
// nothing.
func TestMisspelledMetricSaid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string // metrics reported at each of 3 steps
		want   []string // the lines said, in order
	}{
		{"misspelled", []string{"accuracy", "loss"}, []string{
			`early-stop: no trial of block "block" reported acc after 3 steps of its other metrics, so none is stopped early (they reported accuracy, loss): did you mean accuracy?`,
			`early-stop: no trial of block "block" reported acc in the whole run, so none is stopped early (they reported accuracy, loss): did you mean accuracy?`}},
		{"none step by step", nil, []string{
			`early-stop: no trial of block "block" reported acc in the whole run, so none is stopped early (they reported no metric step by step: a metrics: file is read only at the end)`}},
		{"reported", []string{"loss", "acc"}, nil},
		{"reported as nan", []string{"acc"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, trials, _ := sweep("a", "b")
			pr := New(p, Options{})
			pr.UseStopper(&stopper{})
			var said []string
			send := through(pr, func(ev event.Event) { said = append(said, ev.Line) })
			send(event.Event{Kind: event.TaskStarted, Task: trials[0]})
			for step := 1; step <= 3; step++ {
				for _, name := range tc.values {
					send(metric(trials[0], name, step, math.NaN()))
				}
			}
			send(event.Event{Kind: event.RunEnded})
			pr.Close()
			if strings.Join(said, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("said\n%s\nwant\n%s", strings.Join(said, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
