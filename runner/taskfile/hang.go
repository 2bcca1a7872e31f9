package taskfile

import (
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Hang is the keys of hang detection and crash loops ("When trials go wrong"): hang-after,
// hang-after-start, hang-floor, hang-retries, no-progress-restarts and gpu-release-wait, on
// a task, its block or config. The zero value sets none; a task's set keys win over its
// block's, a block's over config's (Over).
type Hang struct {
	// After is hang-after: HangAuto (default), HangOff, or a duration set by hand.
	After time.Duration
	// AfterStart is hang-after-start: how long an attempt may show no sign at all; HangOff,
	// or a duration. Unset: hang-after's, where that is a duration by hand; else off.
	AfterStart time.Duration
	// Floor is hang-floor: auto's rule is never shorter (default DefaultHangFloor).
	Floor time.Duration
	// Retries is hang-retries: hung attempts a trial may spend beyond its retries; nil: unset.
	Retries *int
	// NoProgress is no-progress-restarts: failed attempts in a row without progress that
	// end a trial; NoProgressOff: never.
	NoProgress int
	// ReleaseWait is gpu-release-wait: how long a hung trial's GPU waits for its memory to
	// come back before the GPU is left out of admission; HangOff: not at all.
	ReleaseWait time.Duration
}

// The values of Hang's durations that are words.
const (
	HangOff  time.Duration = -1 // off, or 0
	HangAuto time.Duration = -2 // auto: five times the longest gap seen
)

// The defaults of Hang's keys.
const (
	DefaultHangFloor          = 15 * time.Minute
	DefaultHangRetries        = 2
	DefaultNoProgressRestarts = 3
	DefaultGPUReleaseWait     = 60 * time.Second
	NoProgressOff             = -1
)

// DefaultHang is the rules of a file that sets none of the keys.
func DefaultHang() Hang {
	n := DefaultHangRetries
	return Hang{After: HangAuto, Floor: DefaultHangFloor, Retries: &n, NoProgress: DefaultNoProgressRestarts, ReleaseWait: DefaultGPUReleaseWait}
}

// Over is h with the keys that o sets put over it.
func (h Hang) Over(o Hang) Hang {
	pick := func(a, b time.Duration) time.Duration {
		if b != 0 {
			return b
		}
		return a
	}
	h.After, h.AfterStart, h.Floor, h.ReleaseWait = pick(h.After, o.After), pick(h.AfterStart, o.AfterStart), pick(h.Floor, o.Floor), pick(h.ReleaseWait, o.ReleaseWait)
	if o.Retries != nil {
		h.Retries = o.Retries
	}
	if o.NoProgress != 0 {
		h.NoProgress = o.NoProgress
	}
	return h
}

// StartRule is how long an attempt may show no sign at all before it is hung; 0: never.
func (h Hang) StartRule() time.Duration {
	switch {
	case h.AfterStart > 0:
		return h.AfterStart
	case h.AfterStart == 0 && h.After > 0:
		return h.After
	}
	return 0
}

// hangKey decodes one of Hang's keys into h; it reports whether p was one.
func hangKey(d *Decoder, p Pair, h *Hang) bool {
	switch p.Name {
	case "hang-after":
		h.After = decodeHangDuration(d, p, true, true)
	case "hang-after-start":
		h.AfterStart = decodeHangDuration(d, p, false, true)
	case "hang-floor":
		h.Floor = decodeHangDuration(d, p, false, false)
	case "gpu-release-wait":
		h.ReleaseWait = decodeHangDuration(d, p, false, true)
	case "hang-retries":
		if n, ok := decodeCount(d, p, 0, false); ok {
			h.Retries = &n
		}
	case "no-progress-restarts":
		if n, ok := decodeCount(d, p, 1, true); ok {
			h.NoProgress = n
		}
	default:
		return false
	}
	return true
}

// decodeHangDuration reads a duration of at least 1s; auto where auto says so, off or 0
// (HangOff) where off says so. Below 1 s is refused: no trial shows a sign that often.
func decodeHangDuration(d *Decoder, p Pair, auto, off bool) time.Duration {
	want := "a duration of at least 1s, such as 90s, 30m or 2h"
	if off {
		want += ", or off"
	}
	if auto {
		want += ", or auto"
	}
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		s := strings.TrimSpace(p.Value.Value)
		v, err := time.ParseDuration(s)
		switch {
		case auto && s == "auto":
			return HangAuto
		case off && (s == "off" || s == "0" || err == nil && v == 0):
			return HangOff
		case err == nil && v >= time.Second:
			return v
		case err == nil && v > 0:
			d.Errorf(p.Value, "%s: %s is below 1s: want %s", p.Name, s, want)
			return 0
		}
	}
	d.Errorf(p.Value, "%s: want %s, got %s", p.Name, want, describeNode(p.Value))
	return 0
}

// decodeCount reads a whole number of at least lowest, or off (NoProgressOff) where off says so.
func decodeCount(d *Decoder, p Pair, lowest int, off bool) (int, bool) {
	if p.Value.Kind == yaml.ScalarNode {
		s := strings.TrimSpace(p.Value.Value)
		if off && s == "off" {
			return NoProgressOff, true
		}
		if n, err := strconv.Atoi(s); err == nil && wholeNumber(s) && n >= lowest {
			return n, true
		}
	}
	more := ""
	if off {
		more = ", or off"
	}
	d.Errorf(p.Value, "%s: want a whole number of at least %d%s, got %s", p.Name, lowest, more, describeNode(p.Value))
	return 0, false
}
