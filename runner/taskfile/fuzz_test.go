package taskfile

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// FuzzDuration feeds the duration decoders (timeout:, every:, update-interval:) any scalar:
// no panic, never a negative duration, and a problem reported exactly when nothing usable
// came out (0 is usable only where the key gives it a meaning).
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"90s", "0", "0s", "-1s", "1.5h", "2h45m", "500", "1e300", "9223372036854775807ns", "1", "ms", " 5m "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Pair{Name: "timeout", Key: &yaml.Node{Kind: yaml.ScalarNode, Value: "timeout"},
			Value: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}}
		for _, zero := range []string{"", "no timeout"} {
			d := &Decoder{}
			v := d.Duration(p, zero)
			if v < 0 {
				t.Fatalf("duration(%q) = %v", s, v)
			}
			if bad := len(d.Problems) > 0; bad != (v == 0 && (zero == "" || !isZeroDuration(s))) {
				t.Fatalf("duration(%q, %q) = %v with %d problems", s, zero, v, len(d.Problems))
			}
		}
		d := &Decoder{}
		if v := decodeUpdateInterval(d, p); v < 0 {
			t.Fatalf("update-interval %q = %v", s, v)
		}
	})
}

// isZeroDuration reports whether s spells a zero duration: "0", "0s", "0h0m", "-0s".
func isZeroDuration(s string) bool {
	s = strings.TrimSpace(s)
	v, err := time.ParseDuration(s)
	return s == "0" || (err == nil && v == 0)
}
