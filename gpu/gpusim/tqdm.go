package gpusim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Progress prints a progress bar as tqdm (4.x, tqdm/std.py) prints it to a pipe: each
// update "\r"-prefixed and padded to the length of the one before, in tqdm's default format
// "{percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate_fmt}]" with a bar of
// 10 cells (no terminal width) of Unicode eighths, at most every mininterval (0.1 s), and its
// rate an exponential moving average of the updates (smoothing 0.3); a newline at the end.
type Progress struct {
	w       io.Writer
	total   int
	now     func() time.Time
	start   time.Time
	lastN   int
	lastT   time.Time
	dn, dt  ema
	lastLen int
}

// mininterval is tqdm's default least time between two updates it prints.
const mininterval = 100 * time.Millisecond

// NewProgress starts a bar of total steps on w, printing its first state; now is the clock
// (time.Now but in tests).
func NewProgress(w io.Writer, total int, now func() time.Time) *Progress {
	if w == nil {
		w = io.Discard
	}
	p := &Progress{w: w, total: total, now: now, start: now()}
	p.lastT = p.start
	p.print(0)
	return p
}

// Update tells it that n steps are done; it prints when tqdm would.
func (p *Progress) Update(n int) {
	t := p.now()
	if t.Sub(p.lastT) < mininterval {
		return
	}
	p.dn.add(float64(n - p.lastN))
	p.dt.add(t.Sub(p.lastT).Seconds())
	p.lastN, p.lastT = n, t
	p.print(n)
}

// Close prints the last state and ends the line, as tqdm's close does.
func (p *Progress) Close() {
	p.print(p.total)
	fmt.Fprint(p.w, "\n")
}

func (p *Progress) print(n int) {
	elapsed := p.now().Sub(p.start).Seconds()
	rate := 0.0
	if dt := p.dt.value(); dt > 0 {
		rate = p.dn.value() / dt
	} else if elapsed > 0 {
		rate = float64(n) / elapsed
	}
	s := formatMeter(n, p.total, elapsed, rate)
	l := utf8.RuneCountInString(s)
	fmt.Fprint(p.w, "\r"+s+strings.Repeat(" ", max(p.lastLen-l, 0)))
	p.lastLen = l
}

// formatMeter is tqdm.format_meter with its defaults (no prefix, unit "it", no scaling).
func formatMeter(n, total int, elapsed, rate float64) string {
	rateFmt, remaining := "?it/s", "?"
	if rate > 0 {
		rateFmt = fmt.Sprintf("%5.2fit/s", rate)
		if 1/rate > 1 {
			rateFmt = fmt.Sprintf("%5.2fs/it", 1/rate)
		}
		remaining = formatInterval(float64(total-n) / rate)
	}
	frac := float64(n) / float64(total)
	return fmt.Sprintf("%3.0f%%|%s| %d/%d [%s<%s, %s]", frac*100, bar(frac, 10), n, total,
		formatInterval(elapsed), remaining, rateFmt)
}

// barChars is tqdm's Bar.UTF: a space, then the eighths from one to eight.
var barChars = []rune(" ▏▎▍▌▋▊▉█")

// bar is tqdm's Bar: whole cells, then the partial one, then spaces.
func bar(frac float64, cells int) string {
	syms := len(barChars) - 1
	units := int(frac * float64(cells*syms))
	full, part := units/syms, units%syms
	s := strings.Repeat(string(barChars[syms]), full)
	if full < cells {
		s += string(barChars[part]) + strings.Repeat(" ", cells-full-1)
	}
	return s
}

// formatInterval is tqdm.format_interval: [H:]MM:SS.
func formatInterval(sec float64) string {
	t := int(math.Max(sec, 0))
	m, s := t/60, t%60
	if h := m / 60; h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m%60, s)
	}
	return fmt.Sprintf("%02d:%02d", m, s)
}

// ema is tqdm's EMA with smoothing 0.3, bias-corrected for its first values.
type ema struct {
	last  float64
	calls int
}

const smoothing = 0.3

func (e *ema) add(x float64) {
	e.last = smoothing*x + (1-smoothing)*e.last
	e.calls++
}

func (e *ema) value() float64 {
	if e.calls == 0 {
		return 0
	}
	return e.last / (1 - math.Pow(1-smoothing, float64(e.calls)))
}
