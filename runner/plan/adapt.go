package plan

import (
	"fmt"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// fillEarlyStop takes metric and mode from the objective where early-stop leaves them out.
// The objective's mode is the metric's own: early stopping on another metric takes none of
// it (val_loss under an objective of val_accuracy, max, would keep the worst trials).
func (l *loader) fillEarlyStop(c *earlystop.Config, at *yaml.Node) *earlystop.Config {
	if c == nil {
		return nil
	}
	out := *c
	problem := func(msg string, args ...any) {
		l.src.problems = append(l.src.problems, Problem{Pos: l.src.pos(at), Msg: fmt.Sprintf(msg, args...)})
	}
	objs := l.cfg.Objectives
	if len(objs) > 1 && out.Metric == "" {
		problem("early-stop: metric: missing: config objective lists several metrics (%s), so early stopping takes none of them: name the one it compares in early-stop: metric:", objectiveNames(objs))
		return &out
	}
	if len(objs) == 1 && out.Metric == "" {
		out.Metric = objs[0].Metric
	}
	o := objectiveNamed(objs, out.Metric)
	switch {
	case len(objs) == 0 || out.Metric == "":
	case o == nil && out.Mode == "" && len(objs) == 1:
		problem("early-stop: mode: missing: %s is not the objective's metric (%s), so it does not take the objective's mode %s: set mode: max or min for %s", out.Metric, objs[0].Metric, objs[0].Mode, out.Metric)
		return &out
	case o == nil && out.Mode == "":
		problem("early-stop: mode: missing: %s is none of the objectives' metrics (%s), so it takes no objective's mode: set mode: max or min for %s", out.Metric, objectiveNames(objs), out.Metric)
		return &out
	case out.Mode == "":
		out.Mode = o.Mode
	case o != nil && out.Mode != o.Mode:
		problem("early-stop: mode: %s contradicts the objective's mode %s for the same metric %s: early stopping would keep the trials the summary ranks worst; leave mode out, or make them agree", out.Mode, o.Mode, out.Metric)
	}
	if out.Metric == "" || out.Mode == "" {
		problem("early-stop: metric and mode: missing: set them here, or set config objective: {metric, mode}, which early stopping then uses")
	}
	return &out
}

// objectiveNamed is the objective of metric m, nil when none is.
func objectiveNamed(objs []Objective, m string) *Objective {
	for i := range objs {
		if objs[i].Metric == m {
			return &objs[i]
		}
	}
	return nil
}

// objectiveNames lists the objectives' metrics for messages: "val_accuracy, latency_ms".
func objectiveNames(objs []Objective) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Metric
	}
	return strings.Join(names, ", ")
}

// checkAdaptKeys reports sample, search, trials and early-stop where they have no meaning.
func checkAdaptKeys(d *taskfile.Decoder, t *taskfile.Task, level int) {
	for _, k := range []string{"sample", "search"} {
		if t.Has(k) && level != levelTrial {
			d.Errorf(t.Keys[k], "%s: makes the trials of a block: set it on a child of parallel-tasks", k)
		}
	}
	switch {
	case t.Has("sample") && t.Has("search"):
		d.Errorf(t.Keys["search"], "search: cannot be combined with sample: the sampler of search draws the params itself")
	case t.Has("search") && (t.Has("matrix") || t.Has("for-each")):
		d.Errorf(t.Keys["search"], "search: cannot be combined with matrix or for-each: the sampler draws every param")
	case t.Has("sample") && t.Has("for-each"):
		d.Errorf(t.Keys["sample"], "sample: cannot be combined with for-each: make the for-each values a matrix key")
	case (t.Has("sample") || t.Has("search")) && !t.Has("trials"):
		k := "sample"
		if t.Has("search") {
			k = "search"
		}
		d.Errorf(t.Keys[k], "%s: needs trials: N, how many trials to run", k)
	case t.Has("trials") && !t.Has("sample") && !t.Has("search"):
		d.Errorf(t.Keys["trials"], "trials: counts the trials of sample: or search: on this task, which has neither")
	}
	if t.Has("seed") && !t.Has("sample") {
		d.Errorf(t.Keys["seed"], "seed: scrambles the points of sample:, which this task does not have")
	}
	if n := countSearch(t.Parallel); n > 0 && len(t.Parallel) > 1 {
		d.Errorf(t.Keys["parallel-tasks"], "parallel-tasks: a child with search: must be its block's only child: put the other trials in a block of their own")
	}
	if t.Has("early-stop") && !t.Has("parallel-tasks") {
		d.Errorf(t.Keys["early-stop"], "early-stop: stops the losing trials of a block: set it on the task with parallel-tasks, or in config:")
	}
}

func countSearch(ts []*taskfile.Task) int {
	n := 0
	for _, t := range ts {
		if t.Search != nil {
			n++
		}
	}
	return n
}
