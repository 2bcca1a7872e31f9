package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// plainOutput prints one line per thing that happens, each prefixed with its task's name,
// for containers, CI logs and pipes. It never writes an escape code: task output is cleaned
// of them too.
type plainOutput struct {
	o          Options
	rs         *runState
	start      time.Time
	lastStatus time.Time
	prefix     map[*taskNode]string // "[name] ", built once per task
	bars       barUpdates
	buf        []byte
	closed     bool
}

// NewPlain returns the output for a stdout that is not a terminal.
func NewPlain(o Options) Output {
	o = withDefaults(o)
	now := o.Now()
	return &plainOutput{o: o, rs: newRunState(o.Plan, o.ParentOf), start: now, lastStatus: now, prefix: make(map[*taskNode]string), bars: newBarUpdates(o.StatusEvery)}
}

// withDefaults fills in what Options may leave out.
func withDefaults(o Options) Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StatusEvery <= 0 {
		o.StatusEvery = 30 * time.Second
	}
	return o
}

func eventTime(ev event.Event, o Options) time.Time {
	if ev.Time.IsZero() {
		return o.Now()
	}
	return ev.Time
}

func (p *plainOutput) Event(ev event.Event) {
	now := eventTime(ev, p.o)
	switch ev.Kind {
	case event.SyncProgress:
		if ev.Task != nil {
			p.line("[s3] ", p.rs.label(p.rs.node(ev.Task))+": "+cleanLine(ev.Line))
		} else {
			p.line("[s3] ", cleanLine(ev.Line))
		}
		return
	case event.RunStatus:
		p.line("status: ", cleanLine(ev.Line))
		p.lastStatus = now // the scheduler said it; ours would repeat it
		return
	}
	n, changed := p.rs.apply(ev, now)
	if n == nil {
		return
	}
	switch ev.Kind {
	case event.TaskOutput:
		if ev.Task.ShowOutput && p.bars.show(n, ev.Line, now) {
			p.line(p.prefixOf(n), cleanLine(ev.Line))
		}
	case event.TaskWaiting:
		// A reason is said once while it holds: ten trials waiting on one thing are one line
		// (the status line counts them), not ten that read as ten refusals.
		if changed && !p.rs.waitingFor(ev.Reason, n) {
			p.line(p.prefixOf(n), "waiting: "+cleanLine(ev.Reason))
		}
	case event.TaskStarted:
		p.line(p.prefixOf(n), startText(ev))
	case event.TaskEnded:
		p.line(p.prefixOf(n), endText(ev))
	case event.TaskSkipped:
		p.line(p.prefixOf(n), withReason("skipped", ev.Reason))
	}
}

func (p *plainOutput) prefixOf(n *taskNode) string {
	s, ok := p.prefix[n]
	if !ok {
		s = "[" + p.rs.label(n) + "] "
		p.prefix[n] = s
	}
	return s
}

// line writes prefix and text as one line with one Write, so that lines stay whole when
// something else writes to the same stream.
func (p *plainOutput) line(prefix, text string) {
	p.buf = append(append(append(p.buf[:0], prefix...), text...), '\n')
	p.o.W.Write(p.buf)
}

// startText says an attempt began: "started (attempt 2/3) on GPU-…".
func startText(ev event.Event) string {
	s := "started"
	if tries := ev.Task.Retries + 1; ev.Attempt > 1 || tries > 1 {
		if ev.Attempt <= tries {
			s += fmt.Sprintf(" (attempt %d/%d)", ev.Attempt, tries)
		} else {
			s += fmt.Sprintf(" (attempt %d)", ev.Attempt)
		}
	}
	if len(ev.Devices) > 0 {
		s += " on " + strings.Join(ev.Devices, ", ")
	}
	return s
}

// endText says how an attempt ended, always with its exit code and duration.
func endText(ev event.Event) string {
	head := "failed with " + exitText(ev.ExitCode) + " in " + humanDuration(ev.Duration)
	switch ev.Status {
	case results.StatusOK:
		return withReason("ok (exit code 0) in "+humanDuration(ev.Duration), ev.Reason)
	case results.StatusIgnored:
		head += " (ignored)"
	case results.StatusSkipped:
		return withReason("skipped", ev.Reason)
	case results.StatusStopped:
		head = "stopped with " + exitText(ev.ExitCode) + " in " + humanDuration(ev.Duration)
	case results.StatusPruned:
		head = "pruned in " + humanDuration(ev.Duration)
	case results.StatusDiverged:
		head = "diverged in " + humanDuration(ev.Duration)
	case results.StatusPaused:
		head = "paused in " + humanDuration(ev.Duration)
	case results.StatusFailed:
	default:
		head = fmt.Sprintf("attempt %d ended with %s in %s", ev.Attempt, exitText(ev.ExitCode), humanDuration(ev.Duration))
	}
	if ev.Try != nil && ev.Try.Class != "" && ev.Try.Class != string(ev.Status) {
		head += " (" + ev.Try.Class + ")" // the failure's class: runner/failclass
	}
	return withReason(head, extraReason(ev.Reason, ev.ExitCode))
}

// extraReason is what a failure's reason says beyond its exit code: the scheduler's
// reasons start with "exit code 3" and ignored ones end in "(ignored)", which the line
// already says.
func extraReason(reason string, code int) string {
	r := strings.TrimPrefix(reason, exitText(code))
	if len(r) < len(reason) {
		r = strings.TrimLeft(r, "; ,:")
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r), "(ignored)"))
}

// exitText names an exit code; -1 means killed by a signal, as in TaskResult.
func exitText(code int) string { return fmt.Sprintf("exit code %d", code) }

func withReason(s, reason string) string {
	if reason == "" {
		return s
	}
	return s + ": " + cleanName(reason)
}

func (p *plainOutput) Tick(now time.Time) {
	if p.closed || now.Sub(p.lastStatus) < p.o.StatusEvery {
		return
	}
	p.lastStatus = now
	p.line("status: ", p.statusText(now))
}

// statusText is the periodic one-line status: what runs, what waits and why, what is done.
func (p *plainOutput) statusText(now time.Time) string {
	c := p.rs.counts()
	var parts []string
	if running := p.rs.inState(stRunning); len(running) > 0 {
		names := make([]string, 0, 3)
		for _, n := range running[:min(3, len(running))] {
			names = append(names, truncateWidth(p.rs.label(n), 40))
		}
		if more := len(running) - len(names); more > 0 {
			names = append(names, fmt.Sprintf("+%d more", more))
		}
		parts = append(parts, fmt.Sprintf("%d running (%s)", len(running), strings.Join(names, ", ")))
	}
	if waiting := p.rs.inState(stWaiting); len(waiting) > 0 {
		n := waiting[0]
		s := truncateWidth(p.rs.label(n), 40)
		if n.reason != "" {
			s += ": " + truncateWidth(cleanName(n.reason), 80)
		}
		if len(waiting) > 1 {
			s += fmt.Sprintf("; +%d more", len(waiting)-1)
		}
		parts = append(parts, fmt.Sprintf("%d waiting (%s)", len(waiting), s))
	}
	done := finished(c)
	parts = append(parts, fmt.Sprintf("%d/%d done", done, p.rs.total()))
	for _, s := range []taskStatus{stFailed, stStopped, stPruned, stDiverged, stIgnored, stSkipped} {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	parts = append(parts, "elapsed "+humanDuration(now.Sub(p.start)))
	return strings.Join(parts, ", ")
}

func (p *plainOutput) Close(res *results.Run) error {
	if p.closed {
		return nil
	}
	p.closed = true
	if res == nil {
		return nil
	}
	fmt.Fprintln(p.o.W)
	WriteSummary(p.o.W, res, summaryOptions(p.o.Plan, false))
	return nil
}

// summaryOptions reads the summary's settings from the task file's config.
func summaryOptions(p *plan.Plan, color bool) SummaryOptions {
	so := SummaryOptions{Color: color, FailureReport: true}
	if p != nil {
		so.FailureReport = p.Config.ShowFailureReport
	}
	return so
}
