package taskfile

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/metric"
	"gopkg.in/yaml.v3"
)

// What a sweep is for and who hears of its end: config's objective, stop-when and notify.

// Condition is config stop-when: one metric compared with a number ("val_accuracy >= 0.9").
type Condition struct {
	Metric string
	Op     string // >=, >, <=, <, ==
	Value  float64
	Text   string // as written, for messages
}

// Met reports whether a metric's value satisfies the condition.
func (c Condition) Met(v float64) bool {
	switch c.Op {
	case ">=":
		return v >= c.Value
	case ">":
		return v > c.Value
	case "<=":
		return v <= c.Value
	case "<":
		return v < c.Value
	case "==":
		return v == c.Value
	}
	return false
}

// Notify is config notify: where the results JSON is POSTed when the run ends. ${VAR} in
// URL and header values is expanded when the run ends, against runall's environment.
type Notify struct {
	URL     string
	Pos     Pos           // where url is written
	Headers []EnvVar      // name: value, in file order
	Timeout time.Duration // how long to keep retrying (default 30s)
}

// DefaultNotifyTimeout bounds the retries of the end-of-run notification.
const DefaultNotifyTimeout = 30 * time.Second

var (
	notifyKeys   = []string{"url", "headers", "timeout"}
	conditionRE  = lazyre.New(`^\s*([^\s<>=!]+)\s*(>=|<=|==|>|<)\s*([^\s<>=!]+)\s*$`)
	headerNameRE = lazyre.New("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

func decodeCondition(d *Decoder, p Pair) *Condition {
	s := d.Str(p)
	m := conditionRE.FindStringSubmatch(s)
	bad := func(why string) *Condition {
		d.Errorf(p.Value, "stop-when: %s: want one metric, one of >= > <= < ==, and a number, such as \"val_accuracy >= 0.9\"", why)
		return nil
	}
	if m == nil {
		return bad(fmt.Sprintf("cannot read %q", s))
	}
	if !metric.ValidName(m[1]) {
		return bad(fmt.Sprintf("%q is not a metric name", m[1]))
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad(fmt.Sprintf("%q is not a number", m[3]))
	}
	return &Condition{Metric: m[1], Op: m[2], Value: v, Text: strings.TrimSpace(s)}
}

func decodeNotify(d *Decoder, p Pair) *Notify {
	ps, ok := d.Pairs(p.Value, "notify: want a mapping with url: and optionally headers: and timeout:")
	if !ok {
		return nil
	}
	n := &Notify{Timeout: DefaultNotifyTimeout}
	for _, q := range ps {
		switch q.Name {
		case "url":
			n.URL = d.Str(q)
			checkNotifyURL(d, q.Value, n.URL)
		case "headers":
			n.Headers = decodeHeaders(d, q)
		case "timeout":
			n.Timeout = d.Duration(q, "")
		default:
			d.UnknownKey(q, "notify:", notifyKeys)
		}
	}
	if n.URL == "" {
		d.Errorf(p.Value, "notify: url: missing: want the http(s) address to POST the results to")
	}
	return n
}

// checkNotifyURL checks what can be checked before ${VAR}s are expanded: a URL written out
// must be http(s); one that starts with a variable is checked when the run ends.
func checkNotifyURL(d *Decoder, n *yaml.Node, s string) {
	if s == "" || strings.HasPrefix(s, "$") {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Errorf(n, "notify: url: want an http:// or https:// address, got %s", RedactURL(s))
	}
}

func decodeHeaders(d *Decoder, p Pair) []EnvVar {
	if isNull(p.Value) {
		return nil
	}
	ps, ok := d.Pairs(p.Value, "notify: headers: want a mapping of Name: value")
	if !ok {
		return nil
	}
	var out []EnvVar
	for _, h := range ps {
		if !headerNameRE.MatchString(h.Name) {
			d.Errorf(h.Key, "notify: headers: %q is not an HTTP header name", h.Name)
			continue
		}
		if h.Value.Kind != yaml.ScalarNode || isNull(h.Value) {
			d.Errorf(h.Value, "notify: headers: %s: want a string, got %s", h.Name, describeNode(h.Value))
			continue
		}
		out = append(out, EnvVar{Name: h.Name, Value: h.Value.Value})
	}
	return out
}

// RedactURL is a URL fit to print: its scheme and host, with "/…" standing for a path or
// query (webhook URLs carry their token there). One that cannot be parsed is "(a URL)".
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		if strings.HasPrefix(s, "$") && !strings.ContainsAny(s, "/?@") {
			return s // only a variable's name, as written
		}
		return "(a URL)"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		out += "/…"
	}
	return out
}
