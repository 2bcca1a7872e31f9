package taskfile

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// OnOOM is on-oom: a trial that runs out of GPU memory where its need cannot grow (or its
// oom-retries are spent) is retried with one of its params halved (docs/taskfile.md).
type OnOOM struct {
	Halve          string     // the param halved: one of the trial's <param>s
	Min            int        // it is never halved below this (default 1)
	Times          int        // at most this many halvings (default 3)
	KeepCheckpoint bool       // keep-checkpoint: the trial's kept copy is not dropped
	Pos            *yaml.Node // where halve: is written, for a problem with the param
}

// Defaults of on-oom.
const (
	DefaultOnOOMMin   = 1
	DefaultOnOOMTimes = 3
)

var onOOMKeys = []string{"halve", "min", "times", "keep-checkpoint"}

// decodeOnOOM reads on-oom: {halve: PARAM, min: N, times: K, keep-checkpoint: bool}.
func decodeOnOOM(d *Decoder, p Pair) *OnOOM {
	const want = "on-oom: want {halve: PARAM, min: N, times: K, keep-checkpoint: true|false}, PARAM a <param> of the trial"
	pairs, ok := d.Pairs(p.Value, want)
	if !ok {
		return nil
	}
	o := &OnOOM{Min: DefaultOnOOMMin, Times: DefaultOnOOMTimes}
	for _, q := range pairs {
		switch q.Name {
		case "halve":
			o.Halve, o.Pos = strings.Trim(strings.TrimSpace(d.Str(q)), "<>"), q.Value
		case "min":
			o.Min, _ = d.Integer(q, 1)
		case "times":
			o.Times, _ = d.Integer(q, 1)
		case "keep-checkpoint":
			if b := d.Boolean(q); b != nil {
				o.KeepCheckpoint = *b
			}
		default:
			d.UnknownKey(q, "on-oom", onOOMKeys)
		}
	}
	if o.Halve == "" {
		d.Errorf(p.Value, "%s: halve: names the param to halve", want)
		return nil
	}
	return o
}
