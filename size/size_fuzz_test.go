package size

import (
	"strconv"
	"testing"
)

// FuzzParse: any string gives a size or an error, never a panic; a size printed in
// bytes reads back exactly, and Format's rounding reads back within half its last digit.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"7GiB", "512MiB", "1.5GB", "1048576", "0", "-1", "1e400", "NaN", "18446744073709551615",
		"1 G", "kib", "0x10", "2TiB", " 3 gib "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		if v < 1<<53 { // exact in a float64, so exact as bytes too
			if back, err := Parse(strconv.FormatUint(v, 10)); err != nil || back != v {
				t.Fatalf("Parse(%q) = %d, which reads back as %d, %v", s, v, back, err)
			}
		}
		if v >= 1<<62 {
			return // Format's one decimal of GiB can round past the largest size there
		}
		printed := Format(v)
		back, err := Parse(printed)
		if err != nil {
			t.Fatalf("Format(%d) = %q, which does not parse: %v", v, printed, err)
		}
		var slack uint64 // half the last printed digit
		switch {
		case v >= 1<<30:
			slack = 1 << 30 / 20
		case v >= 1<<20:
			slack = 1 << 20 / 2
		case v >= 1<<10:
			slack = 1 << 10 / 2
		}
		if diff := max(back, v) - min(back, v); diff > slack+1 {
			t.Fatalf("Format(%d) = %q reads back as %d, off by %d", v, printed, back, diff)
		}
	})
}
