package progress

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/runall/runall/internal/lazyre"
)

// LinePrefix starts runall's own progress line: "runall-progress iter=120 of=1000". It says
// iter, not step: step already names a metric's step (runall-metric loss=0.3 step=120).
const LinePrefix = "runall-progress"

var (
	// tqdmRE is the right side of a tqdm bar: "| 4/40 [00:00<00:01, 33.10it/s" (with a
	// total), "30it [00:00, 33.07it/s" (without), "1.20k/12.0k [00:00<00:01, 9.96kit/s"
	// (unit_scale), "1/4 [00:01<00:03,  1.30s/it" (a slow loop), "0/? [00:00<?, ?it/s".
	tqdmRE = lazyre.New(`(?:^|[\s|:])([0-9.]+[kMGTPEZY]?)(?:/([0-9.]+[kMGTPEZY]?|\?))?([A-Za-z]*) \[[0-9:]+(?:<[0-9:?]+)?, *(\?|[0-9.]+[kMGTPEZY]?)([A-Za-z]*)/([A-Za-z]+)`)
	// kerasBarRE is the start of a Keras progress bar: " 3/12 [======>....]" (Keras 2),
	// " 3/12 ━━━━━━" (Keras 3), "12/12 - 3s - ..." (verbose=2), "   12/Unknown - 3s".
	kerasBarRE = lazyre.New(`^\s*(\d+)/(\d+|Unknown)(?: \[[=>.]*\]| ━+| -| \d)`)
	// kerasTimeRE is the time a step took, as Keras prints it: "250ms/step".
	kerasTimeRE = lazyre.New(`\s(\d+)(s|ms|us)/(step|sample)\b`)
	// kerasEpochRE is the line Keras prints as an epoch starts.
	kerasEpochRE = lazyre.New(`^\s*Epoch (\d+)/(\d+)\s*$`)
	// hfEpochRE is the epoch of a Hugging Face log dict: {'loss': 0.5, ..., 'epoch': 0.5}.
	hfEpochRE = lazyre.New(`['"]epoch['"]: *([0-9.eE+-]+) *[,}]`)
)

// kerasState is the epoch a Keras fit is in, from its "Epoch 3/10" lines.
type kerasState struct{ epoch, epochs int }

// parseLine reads one line's last state; ok is false when it says no progress.
func parseLine(s string, k *kerasState) (u update, ok bool, err error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, LinePrefix+" ") || t == LinePrefix:
		u, err = parseRunall(t)
		return u, err == nil, err
	case strings.HasSuffix(t, "}") && strings.Contains(t, "epoch"):
		u, ok = parseHFLog(t)
		return u, ok, nil
	case t != "" && ('0' <= t[0] && t[0] <= '9' || t[0] == 'E'):
		if u, ok = parseKeras(t, k); ok {
			return u, true, nil
		}
	}
	if mayBeTqdm(s) {
		u, ok = parseTqdm(s)
	}
	return u, ok, nil
}

// mayBeTqdm reports whether s can match tqdmRE at all: a "/" and a " [" before a digit (the
// time elapsed). Most lines of most output are not bars and run no regexp.
func mayBeTqdm(s string) bool {
	if strings.IndexByte(s, '/') < 0 {
		return false
	}
	for i := strings.Index(s, " ["); i >= 0; {
		if i+2 < len(s) && '0' <= s[i+2] && s[i+2] <= '9' {
			return true
		}
		j := strings.Index(s[i+2:], " [")
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// parseRunall reads "runall-progress iter=N [of=M]".
func parseRunall(line string) (update, error) {
	const want = "want runall-progress iter=N [of=M]"
	u := update{key: barKey{source: FromRunall}, unit: "iter"}
	seen := false
	for _, f := range strings.Fields(strings.TrimPrefix(line, LinePrefix)) {
		name, text, ok := strings.Cut(f, "=")
		if !ok {
			return u, fmt.Errorf("%s line: %q is not name=value (%s)", LinePrefix, f, want)
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return u, fmt.Errorf("%s line: %s=%s is not a number of iterations (%s)", LinePrefix, name, text, want)
		}
		switch name {
		case "iter":
			u.n, seen = v, true
		case "of":
			u.total = v
			u.key.total = text
		default:
			return u, fmt.Errorf("%s line: unknown field %q (%s)", LinePrefix, name, want)
		}
	}
	if !seen {
		return u, fmt.Errorf("%s line: no iter= (%s)", LinePrefix, want)
	}
	return u, nil
}

// parseHFLog reads the epoch of a log dict as Hugging Face's Trainer prints it, alone on its
// line or after a bar tqdm left without a newline.
func parseHFLog(s string) (update, bool) {
	i := max(strings.LastIndex(s, "{'"), strings.LastIndex(s, `{"`))
	if i < 0 {
		return update{}, false
	}
	m := hfEpochRE.FindStringSubmatch(s[i:])
	if m == nil {
		return update{}, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return update{}, false
	}
	return update{key: barKey{source: FromHFLog}, n: v, unit: "epoch"}, true
}

// parseKeras reads a Keras bar, counting the steps of the epochs before when its "Epoch e/E"
// lines said which epoch it is in, so that n/total is the whole fit's.
func parseKeras(s string, k *kerasState) (update, bool) {
	if m := kerasEpochRE.FindStringSubmatch(s); m != nil {
		k.epoch, _ = strconv.Atoi(m[1])
		k.epochs, _ = strconv.Atoi(m[2])
		return update{}, false
	}
	m := kerasBarRE.FindStringSubmatch(s)
	if m == nil {
		return update{}, false
	}
	cur, _ := strconv.ParseFloat(m[1], 64)
	u := update{key: barKey{source: FromBar, label: "keras", total: m[2]}, n: cur, unit: "step"}
	if target, err := strconv.ParseFloat(m[2], 64); err == nil && target > 0 {
		u.total = target
		if k.epoch >= 1 && k.epochs >= k.epoch {
			u.n += float64(k.epoch-1) * target
			u.total *= float64(k.epochs)
		}
	}
	if t := kerasTimeRE.FindStringSubmatch(s); t != nil {
		per, _ := strconv.ParseFloat(t[1], 64)
		per *= map[string]float64{"s": 1, "ms": 1e-3, "us": 1e-6}[t[2]]
		if per > 0 {
			u.rate = 1 / per
		}
		u.unit = t[3]
	}
	return u, true
}

// parseTqdm reads a tqdm bar: its count, total and rate, and its label (the desc before the
// bar) to tell it from the script's other bars.
func parseTqdm(s string) (update, bool) {
	m := tqdmRE.FindStringSubmatch(s)
	if m == nil {
		return update{}, false
	}
	n, ok := scaled(m[1])
	if !ok {
		return update{}, false
	}
	u := update{n: n, unit: m[3]}
	if m[2] != "" && m[2] != "?" {
		if u.total, ok = scaled(m[2]); !ok {
			return update{}, false
		}
	}
	if m[4] != "?" {
		r, ok := scaled(m[4])
		switch {
		case ok && m[5] == "s" && m[6] != "s" && r > 0: // "1.30s/it": seconds per step
			u.rate, u.unit = 1/r, m[6]
		case ok && m[6] == "s":
			u.rate, u.unit = r, m[5]
		}
	} else if u.unit == "" {
		u.unit = m[5]
	}
	if u.unit == "" {
		u.unit = "it"
	}
	u.label = tqdmLabel(s[:strings.Index(s, m[0])])
	u.key = barKey{source: FromBar, label: withoutDigits(u.label), total: m[2]}
	return u, true
}

// tqdmLabel is a bar's desc: what precedes its percentage and bar ("Epoch 0:  10%|█  |").
func tqdmLabel(prefix string) string {
	if i := strings.IndexByte(prefix, '|'); i >= 0 {
		prefix = prefix[:i]
	}
	prefix = strings.TrimSpace(prefix)
	if strings.HasSuffix(prefix, "%") {
		prefix = strings.TrimRight(prefix, "0123456789.% ")
	}
	return strings.TrimSpace(strings.TrimSuffix(prefix, ":"))
}

// withoutDigits is a label with each run of digits as "#": "Epoch 3" is "Epoch 0" redrawn.
func withoutDigits(s string) string {
	var b strings.Builder
	digit := false
	for _, c := range s {
		isDigit := '0' <= c && c <= '9'
		if !isDigit {
			b.WriteRune(c)
		} else if !digit {
			b.WriteByte('#')
		}
		digit = isDigit
	}
	return b.String()
}

// scaled reads a count as tqdm's unit_scale writes it: "1.20k" is 1200.
func scaled(s string) (float64, bool) {
	mult := 1.0
	if i := strings.IndexAny(s, "kMGTPEZY"); i >= 0 && i == len(s)-1 {
		mult = math.Pow(1000, float64(strings.IndexByte("kMGTPEZY", s[i])+1))
		s = s[:i]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v * mult, true
}

// lastState is what a terminal would show last of a line: the text after its last \r or \b
// (a bar redrawn in place), without colour or cursor sequences.
func lastState(line string) string {
	line = strings.TrimRight(line, "\r\b\n")
	if i := strings.LastIndexAny(line, "\r\b"); i >= 0 {
		line = line[i+1:]
	}
	if strings.IndexByte(line, 0x1b) < 0 {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] != 0x1b {
			b.WriteByte(line[i])
			continue
		}
		// CSI: ESC [ parameters, then a final byte in @..~.
		if i+1 < len(line) && line[i+1] == '[' {
			i += 2
			for i < len(line) && (line[i] < '@' || line[i] > '~') {
				i++
			}
		} else {
			i++
		}
	}
	return b.String()
}
