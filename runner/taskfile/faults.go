package taskfile

import (
	"strconv"
	"strings"

	"github.com/runall/runall/runner/metric"
	"gopkg.in/yaml.v3"
)

// The keys of "When trials go wrong" (docs/taskfile.md): diverged-on and fail-fast, each on
// a block (a task with parallel-tasks) or in config.

// DivergedOn is diverged-on: the metrics whose NaN or infinite value ends a trial as
// diverged. The zero value is auto.
type DivergedOn struct {
	Off, Any bool
	// Names are the metrics it watches, when it lists them; none: auto (the objectives, the
	// early-stop metric and any metric whose name holds "loss") unless Off or Any.
	Names []string
}

// Watches reports whether rule watches metric, given the metrics auto watches besides those
// holding "loss" (the objectives, the early-stop metric).
func (rule DivergedOn) Watches(metric string, auto []string) bool {
	switch {
	case rule.Off:
		return false
	case rule.Any:
		return true
	case len(rule.Names) > 0:
		return contains(rule.Names, metric)
	}
	return strings.Contains(strings.ToLower(metric), "loss") || contains(auto, metric)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String is the rule as written.
func (rule DivergedOn) String() string {
	switch {
	case rule.Off:
		return "off"
	case rule.Any:
		return "any"
	case len(rule.Names) > 0:
		return "[" + strings.Join(rule.Names, ", ") + "]"
	}
	return "auto"
}

// DefaultFailFast is how many trials of a block that fail alike, before any succeeded or
// reported a metric, stop it launching more, unless fail-fast says otherwise.
const DefaultFailFast = 3

// FailFastOff is fail-fast: off, as the value is kept (0 is not set).
const FailFastOff = -1

// decodeDivergedOn reads diverged-on: auto, any, off, or a list of metric names.
func decodeDivergedOn(d *Decoder, p Pair) *DivergedOn {
	const want = "want auto, any, off, or a list of metric names"
	if isNull(p.Value) {
		d.Errorf(p.Value, "diverged-on: %s", want)
		return nil
	}
	names := d.StringOrList(p)
	if p.Value.Kind == yaml.ScalarNode {
		switch names[0] {
		case "auto":
			return &DivergedOn{}
		case "any":
			return &DivergedOn{Any: true}
		case "off":
			return &DivergedOn{Off: true}
		}
	}
	for _, n := range names {
		if !metric.ValidName(n) {
			d.Errorf(p.Value, "diverged-on: %q is not a metric name: %s", n, want)
			return nil
		}
	}
	if len(names) == 0 {
		d.Errorf(p.Value, "diverged-on: %s", want)
		return nil
	}
	return &DivergedOn{Names: names}
}

// faultKey decodes a key of what runall does when the task's trials go wrong (a block's).
// It reports whether p was one.
func (t *Task) faultKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "diverged-on":
		t.DivergedOn = decodeDivergedOn(d, p)
	case "fail-fast":
		t.FailFast = decodeFailFast(d, p)
	case "on-oom":
		t.OnOOM = decodeOnOOM(d, p)
	default:
		return hangKey(d, p, &t.Hang)
	}
	return true
}

// faultKey decodes config's diverged-on and fail-fast. It reports whether p was one.
func (c *ConfigBlock) faultKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "diverged-on":
		if r := decodeDivergedOn(d, p); r != nil {
			c.Config.DivergedOn = *r
		}
	case "fail-fast":
		if n := decodeFailFast(d, p); n != 0 {
			c.Config.FailFast = n
		}
	default:
		return hangKey(d, p, &c.Config.Hang)
	}
	return true
}

// decodeFailFast reads fail-fast: a count of 1 or more, or off (FailFastOff).
func decodeFailFast(d *Decoder, p Pair) int {
	if p.Value.Kind == yaml.ScalarNode && strings.TrimSpace(p.Value.Value) == "off" {
		return FailFastOff
	}
	if p.Value.Kind == yaml.ScalarNode && wholeNumber(p.Value.Value) {
		if n, err := strconv.Atoi(strings.TrimSpace(p.Value.Value)); err == nil && n >= 1 {
			return n
		}
	}
	d.Errorf(p.Value, "fail-fast: want how many trials that fail alike stop the block (1 or more, default %d), or off, got %s",
		DefaultFailFast, describeNode(p.Value))
	return 0
}
