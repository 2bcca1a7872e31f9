package taskfile

import (
	"fmt"

	"github.com/runall/runall/runner/metric"
	"gopkg.in/yaml.v3"
)

// Objective is one metric a sweep optimises: the summary and the report rank trials by it
// (by the Pareto front of all of them, where config objective lists several).
type Objective struct {
	Metric string
	Mode   string // "max" or "min"
}

var objectiveKeys = []string{"metric", "mode"}

// decodeObjectives reads config objective: one mapping {metric, mode}, or a list of them
// (several objectives, the first the one the best trial is named by).
func decodeObjectives(d *Decoder, p Pair) []Objective {
	if p.Value.Kind != yaml.SequenceNode {
		if o := decodeObjective(d, p.Value, "objective:"); o != nil {
			return []Objective{*o}
		}
		return nil
	}
	if len(p.Value.Content) == 0 {
		d.Errorf(p.Value, "objective: the list is empty: want one or more {metric, mode}, such as [{metric: val_accuracy, mode: max}, {metric: latency_ms, mode: min}]")
		return nil
	}
	var out []Objective
	seen := map[string]int{}
	for i, n := range p.Value.Content {
		o := decodeObjective(d, ResolveAlias(n), fmt.Sprintf("objective: item %d:", i+1))
		if o == nil {
			continue
		}
		if first, dup := seen[o.Metric]; dup && o.Metric != "" {
			d.Errorf(n, "objective: item %d: metric %s is already item %d: list each metric once", i+1, o.Metric, first)
			continue
		}
		seen[o.Metric] = i + 1
		out = append(out, *o)
	}
	return out
}

// decodeObjective reads one {metric, mode}; where names it in messages.
func decodeObjective(d *Decoder, n *yaml.Node, where string) *Objective {
	ps, ok := d.Pairs(n, where+" want a mapping such as {metric: val_accuracy, mode: max}, or a list of them")
	if !ok {
		return nil
	}
	o := &Objective{}
	for _, q := range ps {
		switch q.Name {
		case "metric":
			o.Metric = d.Str(q)
			if o.Metric != "" && !metric.ValidName(o.Metric) {
				d.Errorf(q.Value, "%s metric: %q is not a metric name: want letters, digits, _ . : / -, starting with a letter or _", where, o.Metric)
			}
		case "mode":
			o.Mode = d.Str(q)
			if o.Mode != "max" && o.Mode != "min" {
				d.Errorf(q.Value, "%s mode: want max or min, got %s", where, describeNode(q.Value))
			}
		default:
			d.UnknownKey(q, where, objectiveKeys)
		}
	}
	if o.Metric == "" {
		d.Errorf(n, "%s metric: missing: name the metric to rank trials by, such as val_accuracy", where)
	}
	if o.Mode == "" {
		d.Errorf(n, "%s mode: missing: max (higher is better) or min (lower is better)", where)
	}
	return o
}
