package output

import (
	"strings"
	"time"
)

// barUpdates says which of a bar's updates drawn in place (lines ending in \r) a line-by-line
// output (plain, JSON) shows: one a period per task, so that a bar does not flood a log that
// keeps every line. Its last state ends with a newline and is shown, as every other line.
type barUpdates struct {
	every time.Duration
	shown map[*taskNode]time.Time // when a task's update was last shown
}

func newBarUpdates(every time.Duration) barUpdates {
	return barUpdates{every: every, shown: make(map[*taskNode]time.Time)}
}

// show reports whether line is to be shown.
func (b barUpdates) show(n *taskNode, line string, now time.Time) bool {
	if !strings.HasSuffix(line, "\r") {
		return true
	}
	if blankUpdate(line) {
		return false
	}
	if last, ok := b.shown[n]; ok && now.Sub(last) < b.every {
		return false
	}
	b.shown[n] = now
	return true
}

// blankUpdate reports whether line is an update of a bar that draws blanks: tqdm clearing
// its bar before a line is written over it. Nothing to show.
func blankUpdate(line string) bool {
	return strings.HasSuffix(line, "\r") && strings.TrimSpace(cleanLine(line)) == ""
}
