// Package size reads and prints byte sizes as task files and runall's messages write them
// ("7GiB", "7.0 GiB"). It knows nothing of GPUs: the task file parser, the outputs and the
// report use it without linking a GPU library.
package size

import (
	"fmt"
	"strconv"
	"strings"
)

var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// Parse reads a memory size such as "7GiB", "512MiB", "1.5GB" or "1048576" (bytes).
// Binary units (KiB, MiB, GiB) are powers of 1024, decimal ones (KB, MB, GB) powers of 1000;
// the bare letters K, M, G are taken as binary, as nvidia-smi and Kubernetes users expect.
func Parse(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			// Case-insensitive, but "Gb"-style bits are not a thing here; accept kib/gib too.
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	// Decimal digits and a point only: ParseFloat alone takes 1_000, 0x10, 1e30 and inf.
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || !decimal(t) {
		return 0, fmt.Errorf("invalid size %q: want a number with a unit, such as 7GiB, 512MiB or 2GB", s)
	}
	v := n * mult
	if v >= Max {
		return 0, fmt.Errorf("invalid size %q: too large: at most %s", s, Format(Max-1))
	}
	return uint64(v), nil
}

// Max bounds a size: 8 EiB (2^63 bytes), past which a size no longer fits the signed
// 64-bit counts that memory is measured and limited in.
const Max = 1 << 63

// decimal reports whether s is decimal digits with at most one point.
func decimal(s string) bool {
	digits, points := 0, 0
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// Format prints bytes the way runall's messages do: "7.0 GiB", "512 MiB", "0 B".
func Format(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
