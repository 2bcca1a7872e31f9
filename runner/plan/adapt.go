package plan

import (
	"fmt"
	"strings"

	"github.com/runall/runall/runner/earlystop"
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
