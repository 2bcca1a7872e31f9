package admit

import (
	"strconv"
	"strings"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/failclass"
)

// IsOOM reports whether a line of a trial's output says the GPU ran out of memory: the
// texts runner/failclass knows, where the attempt's class is decided from the same lines.
func IsOOM(line string) bool { return failclass.IsOOMText(line) }

const sizeRE = `([0-9]+(?:\.[0-9]+)?)\s*(bytes|B|KiB|MiB|GiB|TiB)`

var (
	// What the process tried to allocate when it failed. PyTorch: "Tried to allocate 2.00
	// GiB"; XLA: "while trying to allocate 17179869184 bytes"; runall fake-alloc as PyTorch.
	triedRE = lazyre.New(`(?i)(?:tried|trying) to allocate ` + sizeRE)
	// What it already held. PyTorch 2.x: "this process has 10.00 GiB memory in use";
	// PyTorch 1.x: "13.4 GiB reserved in total by PyTorch"; fake-alloc: "already allocated
	// by this process".
	heldRE = lazyre.New(`this process has ` + sizeRE + ` memory in use|` +
		sizeRE + ` reserved in total by PyTorch|` + sizeRE + ` already allocated by this process`)
)

// OOM is what a trial's out-of-memory messages said: what the process held, and what it
// tried to allocate when it failed. Zero where they did not say.
type OOM struct {
	Held  uint64
	Tried uint64
}

// ParseOOM reads what a line of an out-of-memory message says.
func ParseOOM(line string) OOM {
	var o OOM
	if !strings.Contains(line, "allocat") && !strings.Contains(line, "memory in use") && !strings.Contains(line, "in total by") {
		return o // most lines: no regexp for them
	}
	if m := triedRE.FindStringSubmatch(line); m != nil {
		o.Tried = parseSize(m[1], m[2])
	}
	if m := heldRE.FindStringSubmatch(line); m != nil {
		for i := 1; i+1 < len(m); i += 2 {
			if m[i] != "" {
				o.Held = parseSize(m[i], m[i+1])
				break
			}
		}
	}
	return o
}

// Add keeps the most each of two messages said.
func (o OOM) Add(p OOM) OOM { return OOM{Held: max(o.Held, p.Held), Tried: max(o.Tried, p.Tried)} }

func parseSize(num, unit string) uint64 {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0
	}
	mult := map[string]float64{"bytes": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[strings.ToLower(unit)]
	return uint64(f * mult)
}
