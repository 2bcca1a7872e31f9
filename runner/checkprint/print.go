package checkprint

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/size"
)

// Write prints the plan for people: the config, the S3 transfers, then every task in the
// order it runs, numbered, with what it needs and any setting that differs from the default.
// `runall check` prints it; it reads nothing but the plan.
func Write(w io.Writer, p *plan.Plan) {
	var b strings.Builder
	b.WriteString(p.File + "\n")
	describeConfig(&b, p)
	describeS3(&b, p)
	setup, blocks := 0, 0
	for i, t := range p.Tasks {
		b.WriteString("\n")
		describeTask(p, &b, t, nil, strconv.Itoa(i+1)+".", "")
		if t.IsBlock() {
			blocks++
		} else {
			setup++
		}
	}
	trials := len(p.Trials())
	fmt.Fprintf(&b, "\n%s: %s, ", plural(setup+trials, "task", "tasks"), plural(setup, "setup step", "setup steps"))
	if blocks == 0 {
		b.WriteString("no trials\n")
	} else {
		fmt.Fprintf(&b, "%s in %s\n", plural(trials, "trial", "trials"), plural(blocks, "parallel block", "parallel blocks"))
	}
	io.WriteString(w, escapeControls(b.String()))
}

// escapeControls shows control characters other than newline and tab as Go escapes
// (\x1b, \r): a command may hold them, and check prints to a terminal.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isEscaped(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isEscaped(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

func describeConfig(b *strings.Builder, p *plan.Plan) {
	c := p.Config
	opts := []string{fmt.Sprintf("at most %d at once", c.MaxParallel)}
	if c.StopOnFailure {
		opts = append(opts, "stop on failure")
	} else {
		opts = append(opts, "go on after a failure")
	}
	if c.IgnoreFailure {
		opts = append(opts, "ignore failures")
	}
	if !c.ShowOutput {
		opts = append(opts, "output hidden")
	}
	opts = append(opts, "gpu margin "+describeMargin(c.GPUMemoryMargin))
	if p.NeedsHost() {
		opts = append(opts, "memory margin "+describeMargin(c.HostMemoryMargin))
	}
	opts = append(opts, plural(c.OOMRetries, "oom retry", "oom retries"))
	if c.GPUIsolation != "" && c.GPUIsolation != "none" {
		opts = append(opts, "gpu isolation "+string(c.GPUIsolation))
	}
	opts = append(opts, faultRules(p.ConfigFaults())...)
	fmt.Fprintf(b, "config: %s\n", strings.Join(opts, ", "))
	if c.LogPath != "" {
		fmt.Fprintf(b, "log: %s\n", c.LogPath)
	}
	if o := c.Objective; o != nil && len(c.Objectives) <= 1 {
		fmt.Fprintf(b, "objective: %s %s\n", o.Mode, o.Metric)
	}
	if len(c.Objectives) > 1 {
		var each []string
		for _, o := range c.Objectives {
			each = append(each, o.Mode+" "+o.Metric)
		}
		fmt.Fprintf(b, "objectives: %s (trials ranked by Pareto front; the best by %s)\n", strings.Join(each, ", "), c.Objectives[0].Metric)
	}
	if s := c.StopWhen; s != nil {
		fmt.Fprintf(b, "stop when: %s (trials not started yet are skipped)\n", s.Text)
	}
	if n := c.Notify; n != nil {
		fmt.Fprintf(b, "notify: POST the results to %s\n", plan.RedactURL(n.URL))
	}
	for _, f := range describeFormats(c.MetricFormats) {
		fmt.Fprintf(b, "%s\n", f)
	}
}

func describeS3(b *strings.Builder, p *plan.Plan) {
	s := p.S3
	if s == nil {
		return
	}
	var where []string
	if s.Endpoint != "" {
		where = append(where, "endpoint "+s.Endpoint)
	}
	if s.Region != "" {
		where = append(where, "region "+s.Region)
	}
	b.WriteString("s3:")
	if len(where) > 0 {
		b.WriteString(" " + strings.Join(where, ", "))
	}
	b.WriteString("\n")
	for _, t := range s.Download {
		fmt.Fprintf(b, "  %s\n", describeTransfer("download", t))
	}
	for _, t := range s.Upload {
		fmt.Fprintf(b, "  %s\n", describeTransfer("upload", t))
	}
}

// describeTask prints one task as "number name", then its details under the name. Tags and
// env shown on the parent are not repeated on its children.
func describeTask(p *plan.Plan, b *strings.Builder, t, parent *plan.Task, number, indent string) {
	name, _, multiline := strings.Cut(t.Name, "\n")
	if multiline {
		name += " ..."
	}
	fmt.Fprintf(b, "%s%s %s\n", indent, number, name)
	in := indent + strings.Repeat(" ", len(number)+1)
	if cmd := t.ShownCmd(); cmd != "" && (multiline || strings.TrimRight(cmd, "\n") != t.Name) {
		for i, line := range strings.Split(strings.TrimRight(cmd, "\n"), "\n") {
			if i == 0 {
				fmt.Fprintf(b, "%s$ %s\n", in, line)
			} else {
				fmt.Fprintf(b, "%s  %s\n", in, line)
			}
		}
	}
	if t.URL != "" {
		line := "script " + t.URL
		if t.MD5 != "" {
			line += " (md5 " + t.MD5 + ")"
		}
		fmt.Fprintf(b, "%s%s\n", in, line)
	}
	if t.IsBlock() {
		started := ""
		if t.Order == plan.OrderShuffled {
			started = ", started in a shuffled order (order: shuffled)"
		}
		fmt.Fprintf(b, "%sparallel: %s, at most %d at once%s\n", in, plural(t.TrialCount(), "trial", "trials"), p.Config.MaxParallel, started)
		if t.EarlyStop != nil {
			fmt.Fprintf(b, "%s%s\n", in, EarlyStop(t.EarlyStop, t.TrialCount()))
		}
		if rules := blockFaults(p, t); rules != nil {
			fmt.Fprintf(b, "%swhen trials go wrong: %s\n", in, strings.Join(rules, ", "))
		}
		if kept := describeCheckpoints(p, t); kept != "" {
			fmt.Fprintf(b, "%s%s\n", in, kept)
		}
	}
	if t.Search != nil {
		fmt.Fprintf(b, "%s%s\n", in, describeSearch(t.Search))
	}
	if attrs := taskAttrs(p, t, parent); len(attrs) > 0 {
		fmt.Fprintf(b, "%s%s\n", in, strings.Join(attrs, ", "))
	}
	for _, u := range t.Upload {
		fmt.Fprintf(b, "%s%s\n", in, describeTransfer("then upload", u))
	}
	prefix := strings.TrimSuffix(number, ".")
	for i, c := range t.Parallel {
		describeTask(p, b, c, t, fmt.Sprintf("%s.%d", prefix, i+1), in)
	}
	for i, s := range t.Steps {
		describeTask(p, b, s, t, fmt.Sprintf("%s.%d", prefix, i+1), in)
	}
}

// describeGPU is a trial's GPU need as check prints it: "gpu 7.0 GiB x1 capped threads 50%".
func describeGPU(g *plan.GPUSpec) string {
	need := "gpu auto"
	if !g.Auto {
		need = "gpu " + size.Format(g.Memory)
	}
	if !g.Auto || g.Devices > 1 {
		need += fmt.Sprintf(" x%d", g.Devices)
	}
	if g.CapToNeed {
		need += " capped"
	}
	if g.Threads > 0 {
		need += fmt.Sprintf(" threads %d%%", g.Threads) // its share under MPS
	}
	return need
}

// taskAttrs lists what a task needs and the settings where it differs from the config.
func taskAttrs(p *plan.Plan, t, parent *plan.Task) []string {
	c := p.Config
	var attrs []string
	if g := t.GPU; g != nil {
		attrs = append(attrs, describeGPU(g))
	}
	if h := t.Host; h != nil {
		if h.Auto {
			attrs = append(attrs, "memory auto")
		} else {
			attrs = append(attrs, "memory "+size.Format(h.Memory))
		}
	}
	if t.Timeout > 0 {
		attrs = append(attrs, "timeout "+compactDuration(t.Timeout))
	}
	if t.Retries > 0 {
		attrs = append(attrs, plural(t.Retries, "retry", "retries"))
	}
	if t.IgnoreFailure != c.IgnoreFailure {
		attrs = append(attrs, map[bool]string{true: "ignore failure", false: "failure counts"}[t.IgnoreFailure])
	}
	if t.StopOnFailure != c.StopOnFailure {
		attrs = append(attrs, map[bool]string{true: "stop on failure", false: "go on after a failure"}[t.StopOnFailure])
	}
	if t.ShowOutput != c.ShowOutput {
		attrs = append(attrs, map[bool]string{true: "output shown", false: "output hidden"}[t.ShowOutput])
	}
	if t.Sudo {
		attrs = append(attrs, "sudo")
	}
	if t.Cwd != "" {
		attrs = append(attrs, "in "+t.Cwd)
	}
	attrs = append(attrs, inheritedAttrs(t, parent)...)
	if t.LogPath != "" {
		attrs = append(attrs, "log "+t.LogPath)
	}
	if t.Checkpoint != nil {
		attrs = append(attrs, checkpointAttr(t.Checkpoint))
	}
	if t.Metrics != "" && (parent == nil || parent.Metrics != t.Metrics) {
		attrs = append(attrs, "metrics "+t.Metrics)
	}
	if parent != nil && !sameFormats(t.MetricFormats, parent.MetricFormats) || parent == nil && !sameFormats(t.MetricFormats, c.MetricFormats) {
		attrs = append(attrs, describeFormats(t.MetricFormats)...)
	}
	return attrs
}

// inheritedAttrs lists the tags and env names a task adds to its parent's.
func inheritedAttrs(t, parent *plan.Task) []string {
	var parentTags []string
	var parentEnv []plan.EnvVar
	if parent != nil {
		parentTags, parentEnv = parent.Tags, parent.Env
	}
	var attrs, tags []string
	for _, tag := range t.Tags {
		if !slices.Contains(parentTags, tag) {
			tags = append(tags, tag)
		}
	}
	if len(tags) > 0 {
		attrs = append(attrs, "tags "+strings.Join(tags, ","))
	}
	var env []string // names only: values may be secrets
	for _, e := range t.Env {
		if !slices.Contains(parentEnv, e) {
			env = append(env, e.Name)
		}
	}
	if len(env) > 0 {
		attrs = append(attrs, "env "+strings.Join(env, ","))
	}
	return attrs
}

func describeTransfer(verb string, t plan.Transfer) string {
	s := fmt.Sprintf("%s %s -> %s", verb, t.From, t.To)
	var opts []string
	if t.Extract {
		opts = append(opts, "extract")
	}
	if t.Every > 0 {
		opts = append(opts, "every "+compactDuration(t.Every))
	}
	if t.Delete {
		opts = append(opts, "delete")
	}
	if t.WholeBucket {
		opts = append(opts, "whole-bucket")
	}
	if len(t.Exclude) > 0 {
		opts = append(opts, "exclude "+strings.Join(t.Exclude, " "))
	}
	if len(opts) > 0 {
		s += " (" + strings.Join(opts, ", ") + ")"
	}
	return s
}

func describeMargin(m plan.Margin) string {
	pct := strconv.FormatFloat(m.Fraction*100, 'f', -1, 64) + "%"
	switch {
	case m.Fraction > 0 && m.Bytes > 0:
		return pct + " (at least " + size.Format(m.Bytes) + ")"
	case m.Fraction > 0:
		return pct
	case m.Bytes > 0:
		return size.Format(m.Bytes)
	}
	return "none"
}

// compactDuration prints 2h, 1h30m, 5m, 1m30s, 500ms: time.Duration's form without the
// trailing zero units.
func compactDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
