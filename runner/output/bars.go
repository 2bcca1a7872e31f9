package output

import (
	"strings"
	"time"
)

// barUpdates says which of a bar's updates drawn in place (lines ending in \r) a line-by-line
// output (plain, JSON) shows: one a period per task, so that a bar does not flood a log that
// keeps every line. Its last state ends with a newline and is shown, as every other line,
// unless it is the update just shown (a state that stood still, then ended: proc's readLines).
type barUpdates struct {
	every time.Duration
	shown map[*taskNode]shownUpdate
}

// shownUpdate is a task's update last shown, and when.
type shownUpdate struct {
	at   time.Time
	line string // "" once a line followed
}

func newBarUpdates(every time.Duration) barUpdates {
	return barUpdates{every: every, shown: make(map[*taskNode]shownUpdate)}
}

// show reports whether line is to be shown.
func (b barUpdates) show(n *taskNode, line string, now time.Time) bool {
	last, ok := b.shown[n]
	if !strings.HasSuffix(line, "\r") {
		if ok && last.line != "" {
			b.shown[n] = shownUpdate{at: last.at}
			return line != last.line
		}
		return true
	}
	if blankUpdate(line) || ok && now.Sub(last.at) < b.every {
		return false
	}
	b.shown[n] = shownUpdate{at: now, line: line[:len(line)-1]}
	return true
}

// blankUpdate reports whether line is an update of a bar that draws blanks: tqdm clearing
// its bar before a line is written over it. Nothing to show.
func blankUpdate(line string) bool {
	return strings.HasSuffix(line, "\r") && strings.TrimSpace(cleanLine(line)) == ""
}
