package output

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/runall/runall/internal/printable"
	"golang.org/x/sys/unix"
)

// IsTerminal reports whether w should get drawing (the live view, a progress line redrawn
// in place): it is a terminal and TERM is not "dumb". An unset TERM on a real terminal
// (kubectl exec -it, docker run -t without an environment) still counts: runall draws with
// VT100 sequences every emulator knows. This is runall's one test for a terminal.
func IsTerminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil || getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// UseColor reports whether an output in mode may use colour: only the live view does, and
// not when NO_COLOR is set to anything (https://no-color.org).
func UseColor(mode Mode, getenv func(string) string) bool {
	return mode == Live && getenv("NO_COLOR") == ""
}

// TerminalSize returns the columns and rows of the terminal f is, or zeros when it is none.
func TerminalSize(f *os.File) (width, height int) {
	if f == nil {
		return 0, 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}

// cleanLine makes a line of task output safe to print: colour and cursor sequences are
// removed, other control characters dropped, and of a line rewritten with carriage returns
// (progress bars) only what a terminal would finally show is kept. Tabs stay. Lines without
// control characters, the common case, are returned as they are without allocating.
func cleanLine(s string) string {
	if isCleanLine(s) {
		return s
	}
	s = strings.TrimRight(s, "\r")
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
		case c < 0x20 && c != '\t' || c == 0x7f:
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if printable.Hidden(r, n) {
				i += n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// isCleanLine reports whether s has nothing cleanLine removes: no control character, no
// invalid UTF-8 and no bidirectional control. ASCII costs one comparison a byte.
func isCleanLine(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if printable.Hidden(r, n) {
			return false
		}
		i += n
	}
	return true
}

// skipEscape returns the index just past the escape sequence starting at s[i] (an ESC).
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40-0x7e
		for i++; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: up to BEL or ESC \
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b {
				if i+1 < len(s) && s[i+1] == '\\' {
					return i + 2
				}
				return i
			}
		}
		return i
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f { // intermediates
		i++
	}
	if i < len(s) {
		i++ // final
	}
	return i
}

// cleanName makes a task name fit on one line: an unnamed task is named by its command,
// which may span lines.
func cleanName(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return cleanLine(s)
}

// runeWidth is the number of columns r takes: 2 for East Asian wide characters and the
// common emoji blocks, 0 for combining marks, else 1. An approximation; the live view
// also turns off autowrap, so a miscount clips a line instead of breaking the frame.
func runeWidth(r rune) int {
	switch {
	case r >= 0x300 && r <= 0x36f, r >= 0x200b && r <= 0x200f, r >= 0xfe00 && r <= 0xfe0f:
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// displayWidth is the number of columns s takes on a terminal.
func displayWidth(s string) int {
	w := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			w = 0
			for _, r := range s {
				w += runeWidth(r)
			}
			return w
		}
	}
	return len(s)
}

// truncateWidth cuts s to at most w columns, ending it with "…" when it was cut.
func truncateWidth(s string, w int) string {
	if displayWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	used := 0
	for i, r := range s {
		rw := runeWidth(r)
		if used+rw > w-1 {
			return s[:i] + "…"
		}
		used += rw
	}
	return s
}

// humanDuration prints a duration the way runall's messages do: 4.1s, 2m10s, 1h05m.
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d = d.Round(100 * time.Millisecond); d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	if d = d.Round(time.Second); d < time.Hour {
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
}

// shortDevice shortens a GPU UUID (GPU-5f0c1a2b-...) to its first eight hex digits; the
// full UUIDs are in the results file.
func shortDevice(id string) string {
	if rest, ok := strings.CutPrefix(id, "GPU-fake-"); ok {
		// Simulated: GPU-fake-<index>-<state id>; the index is what tells them apart.
		index, _, _ := strings.Cut(rest, "-")
		return "GPU-fake-" + index
	}
	if strings.HasPrefix(id, "GPU-") && len(id) > 12 {
		return id[:12]
	}
	return id
}
