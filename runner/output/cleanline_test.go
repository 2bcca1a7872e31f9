package output

import "testing"

// TestCleanLineRaw9bAndBidi (issue: a raw 0x9b byte and U+202E pass through plain and json
// output cleaning): a lone 0x9b byte is an 8-bit CSI to some terminals, and bidirectional
// overrides make a line read other than it is; both go, as does any invalid UTF-8.
func TestCleanLineRaw9bAndBidi(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"raw \x9b31m csi", "raw 31m csi"},
		{"lone \xff\xfe bytes", "lone  bytes"},
		{"admin\u202e txt.exe", "admin txt.exe"},
		{"isolates \u2066x\u2069 and marks \u200ey\u200f \u061c", "isolates x and marks y "},
		{"embedding \u202aa\u202b\u202c\u202d", "embedding a"},
		{"accents café, 中文, emoji 🙂", "accents café, 中文, emoji 🙂"},
	} {
		if got := cleanLine(tc.in); got != tc.want {
			t.Errorf("cleanLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
