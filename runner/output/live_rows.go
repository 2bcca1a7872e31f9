package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/runall/runall/size"
)

// glyph is a state's mark and its colour; a running task's spins with spin.
func glyph(st taskStatus, spin int) (string, string) {
	switch st {
	case stRunning:
		return spinner[spin%len(spinner)], sgrRunning
	case stOK:
		return "✔", sgrOK
	case stFailed:
		return "✘", sgrFailed
	case stIgnored:
		return "⚠", sgrIgnored
	case stWaiting:
		return "·", sgrDim
	case stSkipped:
		return "-", sgrDim
	case stStopped:
		return "■", sgrIgnored
	case stPruned:
		return "✂", sgrDim
	case stDiverged:
		return "∅", sgrIgnored
	case stPaused:
		return "‖", sgrDim
	}
	return " ", ""
}

// timeText is a row's elapsed time, and with an estimate the time it has left.
func (l *liveOutput) timeText(n *taskNode, st taskStatus, now time.Time) string {
	if !l.cfg.ShowTaskTimes {
		return ""
	}
	start, d := n.span(now)
	if start.IsZero() {
		return ""
	}
	s := humanDuration(d)
	if st == stRunning {
		if left, ok := l.remaining(n, now); ok && left > 0 {
			s += " eta " + humanDuration(left)
		}
	}
	return s
}

// row is one task's line: glyph, name, time and what it says now.
func (l *liveOutput) row(n *taskNode, indent string, nameW int, now time.Time, w int) string {
	st := n.state()
	g, sgr := glyph(st, l.spin)
	lb := newLine(w, l.o.Color)
	lb.add(indent, "")
	lb.add(g, sgr)
	lb.add(" ", "")
	name := l.rs.label(n)
	if pad := nameW - displayWidth(name); pad > 0 {
		name += strings.Repeat(" ", pad)
	} else if nameW > 0 {
		name = truncateWidth(name, nameW)
	}
	lb.add(name, "")
	if t := l.timeText(n, st, now); t != "" {
		lb.add("  "+t, sgrDim)
	}
	if st == stRunning && n.memory > 0 {
		lb.add("  "+size.Format(n.memory), sgrDim)
	}
	if d := l.detail(n, st); d != "" {
		lb.add("  "+d, "")
	}
	return lb.String()
}

// detail is what a row says after the time: the last output line while running, why it
// waits, fails or was skipped.
func (l *liveOutput) detail(n *taskNode, st taskStatus) string {
	cur := n
	if !n.isLeaf() {
		cur = n.current()
	}
	var s string
	switch st {
	case stRunning:
		s = oneLineOutput(cur.last)
		if cur != n && cur.t != nil {
			s = strings.TrimSuffix(cleanName(cur.t.Name)+": "+s, ": ")
		}
		return s
	case stWaiting:
		return "waiting: " + cleanName(cur.reason)
	case stSkipped:
		return cleanName(n.reason)
	case stFailed, stIgnored, stStopped, stPruned, stDiverged:
		s = exitText(cur.run.exitCode)
		if why := extraReason(cur.reason, cur.run.exitCode); why != "" {
			s += ": " + cleanName(why)
		}
		if cur != n {
			s = cleanName(cur.t.Name) + ": " + s
		}
		return s
	}
	return ""
}

// oneLineOutput is a task's output line made safe for a frame.
func oneLineOutput(s string) string {
	s = cleanLine(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", " ")
	}
	return s
}

func (l *liveOutput) blockTitle(n *taskNode, now time.Time, w int) string {
	st := n.state()
	g, sgr := glyph(st, l.spin)
	var c [numStatus]int
	for _, k := range n.children {
		c[k.state()]++
	}
	done := finished(c)
	lb := newLine(w, l.o.Color)
	lb.add(g, sgr)
	lb.add(" "+l.rs.label(n), "")
	counts := fmt.Sprintf("  %d/%d done", done, len(n.children))
	if more := countsText(c, []taskStatus{stRunning, stWaiting, stFailed}); more != "" {
		counts += ", " + more
	}
	lb.add(counts, "")
	if t := l.timeText(n, st, now); t != "" {
		lb.add("  "+t, sgrDim)
	}
	return lb.String()
}

// footer is the last line: how many commands are done, run, wait and failed, the time
// since the start and, when every remaining task has an estimate, the ETA.
func (l *liveOutput) footer(now time.Time, w int) string {
	c := l.rs.counts()
	done := finished(c)
	lb := newLine(w, l.o.Color)
	lb.add(fmt.Sprintf("%d/%d done", done, l.rs.total()), "")
	for _, s := range []taskStatus{stRunning, stWaiting, stFailed} {
		if c[s] > 0 {
			sgr := ""
			if s == stFailed {
				sgr = sgrFailed
			}
			lb.add(", ", "")
			lb.add(fmt.Sprintf("%d %s", c[s], s), sgr)
		}
	}
	lb.add(" · elapsed "+humanDuration(now.Sub(l.start)), "")
	var left time.Duration
	known := true
	for _, n := range l.rs.top {
		d, ok := l.remaining(n, now)
		left, known = left+d, known && ok
	}
	if known && left > 0 {
		lb.add(" · ETA "+humanDuration(left), "")
	}
	return lb.String()
}

// remaining estimates how long n has left from the Estimate of its commands: a sequence
// adds them up, a block spreads them over max-parallel-commands. ok is false when a
// command that has not finished has no estimate.
func (l *liveOutput) remaining(n *taskNode, now time.Time) (time.Duration, bool) {
	st := n.state()
	if st.final() {
		return 0, true
	}
	if n.isLeaf() {
		if p := n.est.told.p; st == stRunning && p != nil && p.ETASeconds > 0 {
			// What its output says beats what its earlier runs took.
			return max(0, time.Duration(p.ETASeconds*float64(time.Second))-now.Sub(n.est.told.at)), true
		}
		if !n.est.asked {
			n.est.asked = true
			if l.o.Estimate != nil {
				n.est.d, n.est.ok = l.o.Estimate(n.t)
			}
		}
		if !n.est.ok {
			return 0, false
		}
		if st == stRunning {
			return max(0, n.est.d-now.Sub(n.run.started)), true
		}
		return n.est.d, true
	}
	var sum, longest time.Duration
	open := 0
	for _, k := range n.children {
		d, ok := l.remaining(k, now)
		if !ok {
			return 0, false
		}
		sum, longest = sum+d, max(longest, d)
		if !k.state().final() {
			open++
		}
	}
	if n.seq || open <= 1 {
		return sum, true
	}
	par := open
	if l.cfg.MaxParallel > 0 {
		par = min(par, l.cfg.MaxParallel)
	}
	return max(longest, sum/time.Duration(par)), true
}

// lineBuilder builds one frame line no wider than the terminal, colouring segments only
// when colour is on, so that truncation counts only visible characters.
type lineBuilder struct {
	b     strings.Builder
	room  int
	color bool
}

// newLine starts a frame line of at most w columns, coloured when color is on.
func newLine(w int, color bool) *lineBuilder { return &lineBuilder{room: w, color: color} }

func (lb *lineBuilder) add(s, sgr string) {
	if lb.room <= 0 || s == "" {
		return
	}
	if dw := displayWidth(s); dw > lb.room {
		s, lb.room = truncateWidth(s, lb.room), 0
	} else {
		lb.room -= dw
	}
	if lb.color && sgr != "" {
		lb.b.WriteString("\x1b[" + sgr + "m" + s + "\x1b[0m")
		return
	}
	lb.b.WriteString(s)
}

func (lb *lineBuilder) String() string { return lb.b.String() }
