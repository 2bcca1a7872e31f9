package output

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// liveOutput redraws a frame of the running tasks on every Tick, in the spirit of bashful:
// a line per task with its state, name, time and last output line, and a footer with the
// counts and an ETA. Events only update state, so a flood of output costs no drawing.
//
// A top-level task that has finished is printed once above the frame and leaves it, so the
// frame holds only what runs now and scrollback keeps the rest. The frame never reaches the
// terminal's last row: moving the cursor up over it only works while none of it scrolled.
type liveOutput struct {
	o     Options
	cfg   plan.Config
	rs    *runState
	start time.Time
	sync  syncNote    // the last SyncProgress line, shown above the footer
	notes [][2]string // prefix and text of lines to print above the frame for good

	lines     int  // rows of the frame on screen, which the next draw moves up over
	committed int  // top-level tasks printed above the frame for good
	hidden    bool // cursor hidden and autowrap off, to be undone by restore
	closed    bool // Close ran: draw nothing more
	spin      int
	buf       bytes.Buffer
}

// NewLive returns the output for a stdout that is a terminal (see IsTerminal).
func NewLive(o Options) Output {
	o = withDefaults(o)
	cfg := plan.DefaultConfig()
	if o.Plan != nil {
		cfg = o.Plan.Config
	}
	return &liveOutput{o: o, cfg: cfg, rs: newRunState(o.Plan, o.ParentOf), start: o.Now()}
}

const (
	sgrOK      = "32"
	sgrFailed  = "31"
	sgrIgnored = "33"
	sgrRunning = "36"
	sgrDim     = "90"
)

// syncNote is an S3 line and when it came; after syncLinger it is printed for good.
type syncNote struct {
	line string
	at   time.Time
}

// syncLinger is how long an S3 line stays in the frame without a newer one; then it is
// printed for good, as it is likely a transfer's last word (its totals, or an error).
const syncLinger = 10 * time.Second

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (l *liveOutput) Event(ev event.Event) {
	switch ev.Kind {
	case event.TaskOutput: // the hot path: keep the line, draw nothing
		if ev.Task != nil && ev.Task.ShowOutput {
			l.rs.node(ev.Task).last = ev.Line
		}
	case event.SyncProgress:
		if ev.Task != nil { // an upload after a task failed: worth keeping
			l.notes = append(l.notes, [2]string{"s3: ", l.rs.label(l.rs.node(ev.Task)) + ": " + ev.Line})
			break
		}
		if l.sync.line != "" && eventTime(ev, l.o).Sub(l.sync.at) >= syncLinger {
			l.notes = append(l.notes, [2]string{"s3: ", l.sync.line})
		}
		l.sync = syncNote{ev.Line, eventTime(ev, l.o)}
	case event.RunStatus:
		l.notes = append(l.notes, [2]string{"status: ", ev.Line})
	case event.RunEnded: // the footer says it
	default:
		l.rs.apply(ev, eventTime(ev, l.o))
	}
}

func (l *liveOutput) Tick(now time.Time) {
	if l.closed {
		return
	}
	l.spin++
	l.draw(now, false)
}

// Close draws the final frame, restores the terminal and prints the summary below. It may
// be called more than once.
func (l *liveOutput) Close(res *results.Run) error {
	if l.closed {
		return nil
	}
	l.closed = true
	l.draw(l.o.Now(), true)
	l.restore()
	if res != nil {
		fmt.Fprintln(l.o.W)
		WriteSummary(l.o.W, res, summaryOptions(l.o.Plan, l.o.Color))
	}
	return nil
}

// restore shows the cursor again and turns autowrap back on, leaving the last frame on the
// screen; nothing is drawn after it.
func (l *liveOutput) restore() {
	if l.hidden {
		l.o.W.Write([]byte("\x1b[?7h\x1b[?25h"))
		l.hidden = false
	}
}

// size is the terminal's, from Options or else from W when it is one; 80x24 when
// neither says.
func (l *liveOutput) size() (w, h int) {
	w, h = 80, 24
	if f, ok := l.o.W.(*os.File); ok && (l.o.Width == nil || l.o.Height == nil) {
		if tw, th := TerminalSize(f); tw > 0 && th > 0 {
			w, h = tw, th
		}
	}
	if l.o.Width != nil {
		if v := l.o.Width(); v > 0 {
			w = v
		}
	}
	if l.o.Height != nil {
		if v := l.o.Height(); v > 0 {
			h = v
		}
	}
	return w, h
}

// draw writes committed lines and the new frame over the old one in a single Write.
func (l *liveOutput) draw(now time.Time, final bool) {
	commit, frame := l.render(now, final)
	b := &l.buf
	b.Reset()
	if !l.hidden {
		// Autowrap off: a line whose width was miscounted is clipped instead of taking
		// two rows, which would leave the next cursor-up short.
		b.WriteString("\x1b[?25l\x1b[?7l")
		l.hidden = true
	}
	if l.lines > 0 {
		fmt.Fprintf(b, "\r\x1b[%dA", l.lines)
	}
	for _, s := range slices.Concat(commit, frame) {
		b.WriteString("\x1b[2K")
		b.WriteString(s)
		b.WriteByte('\n')
	}
	b.WriteString("\x1b[J")
	l.lines = len(frame)
	l.o.W.Write(b.Bytes())
}

// render returns the lines to print for good above the frame (top-level tasks that have
// finished since the last draw) and the frame. With final, every task is committed.
func (l *liveOutput) render(now time.Time, final bool) (commit, frame []string) {
	w, h := l.size()
	w-- // never the last column, which some terminals wrap on
	if l.sync.line != "" && (final || now.Sub(l.sync.at) >= syncLinger) {
		l.notes = append(l.notes, [2]string{"s3: ", l.sync.line})
		l.sync.line = ""
	}
	for _, n := range l.notes {
		lb := newLine(w, l.o.Color)
		lb.add(n[0], sgrDim)
		lb.add(oneLineOutput(n[1]), "")
		commit = append(commit, lb.String())
	}
	l.notes = l.notes[:0]
	if l.cfg.SingleLine {
		return commit, []string{l.footer(now, w)}
	}
	for l.committed < len(l.rs.top) {
		n := l.rs.top[l.committed]
		st := n.state()
		if !final && !st.final() {
			break
		}
		if st != stPending {
			commit = append(commit, l.item(n, now, w, -1, h)...)
		}
		l.committed++
	}
	budget := h - 2 // the last row stays free, one is the footer's
	if l.sync.line != "" {
		budget--
	}
	var active []*taskNode
	for _, n := range l.rs.top[l.committed:] {
		if n.state() != stPending {
			active = append(active, n)
		}
	}
	for i, n := range active {
		b := budget - (len(active) - 1 - i) // a row for each later one
		if b < 1 {
			break
		}
		lines := l.item(n, now, w, b, h)
		frame = append(frame, lines...)
		budget -= len(lines)
	}
	if l.sync.line != "" {
		lb := newLine(w, l.o.Color)
		lb.add("s3: ", sgrDim)
		lb.add(oneLineOutput(l.sync.line), "")
		frame = append(frame, lb.String())
	}
	return commit, append(frame, l.footer(now, w))
}

// item is a top-level task's lines within budget rows; budget < 0 commits it (h is the
// terminal's height then, for deciding whether a block is small enough to list whole).
func (l *liveOutput) item(n *taskNode, now time.Time, w, budget, h int) []string {
	if n.isLeaf() || n.seq {
		return []string{l.row(n, "", 0, now, w)}
	}
	lines := []string{l.blockTitle(n, now, w)}
	kids := n.children
	limit := budget - 1
	if budget < 0 {
		if l.cfg.CollapseOnCompletion {
			return lines
		}
		limit = len(kids)
		if len(kids) > h-2 { // too many to list: the notable ones and a count
			limit = len(notable(kids)) + 1
		}
	}
	if limit <= 0 {
		return lines
	}
	show, rest := selectRows(kids, limit)
	nameW := 0
	for _, k := range show {
		nameW = max(nameW, displayWidth(l.rs.label(k)))
	}
	nameW = min(nameW, max(w/3, 10))
	for _, k := range show {
		lines = append(lines, l.row(k, "  ", nameW, now, w))
	}
	if len(rest) > 0 {
		var c [numStatus]int
		for _, k := range rest {
			c[k.state()]++
		}
		lb := newLine(w, l.o.Color)
		lb.add(fmt.Sprintf("  … %d more: %s", len(rest), countsText(c, []taskStatus{stRunning, stWaiting, stPaused, stPending, stFailed, stStopped, stOK, stPruned, stDiverged, stIgnored, stSkipped})), sgrDim)
		lines = append(lines, lb.String())
	}
	return lines
}

// notable is what a big block always shows: its running and failed children.
func notable(kids []*taskNode) []*taskNode {
	var running, failed []*taskNode
	for _, k := range kids {
		switch k.state() {
		case stRunning:
			running = append(running, k)
		case stFailed:
			failed = append(failed, k)
		}
	}
	slices.SortStableFunc(running, func(a, b *taskNode) int { return a.run.first.Compare(b.run.first) })
	slices.SortStableFunc(failed, func(a, b *taskNode) int { return b.run.ended.Compare(a.run.ended) })
	return append(running, failed...)
}

// selectRows picks at most limit rows of kids: all of them when they fit; otherwise, in
// limit-1 rows, the latest failures (up to a quarter of the rows while others run) and
// the longest-running, the last row counting the rest.
func selectRows(kids []*taskNode, limit int) (show, rest []*taskNode) {
	if len(kids) <= limit {
		return kids, nil
	}
	k := limit - 1
	var running, failed []*taskNode
	for _, n := range notable(kids) {
		if n.state() == stFailed {
			failed = append(failed, n)
		} else {
			running = append(running, n)
		}
	}
	nf := min(len(failed), max(1, k/4), k)
	if len(running) < k-nf {
		nf = min(len(failed), k-len(running))
	}
	pick := slices.Concat(failed[:nf], running[:min(len(running), k-nf)])
	slices.SortFunc(pick, func(a, b *taskNode) int { return a.index - b.index })
	i := 0
	for _, n := range kids {
		if i < len(pick) && pick[i] == n {
			i++
			continue
		}
		rest = append(rest, n)
	}
	return pick, rest
}

func countsText(c [numStatus]int, order []taskStatus) string {
	var parts []string
	for _, s := range order {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	return strings.Join(parts, ", ")
}
