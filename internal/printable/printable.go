// Package printable says which characters runall never shows as they are, wherever it shows
// a text from a task file, a task or a sampler (the terminal, the report): they would act on
// what a reader sees rather than be seen. One rule for every place a text is shown.
package printable

import "unicode/utf8"

// Hidden reports whether r (n bytes of UTF-8, as utf8.DecodeRuneInString gives it) must not
// be shown as it is: invalid UTF-8, a C0 or C1 control other than tab and newline, DEL, or a
// bidirectional control (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069), which reorders the
// text around it (U+202E shows a name's end backwards, hiding what it says).
func Hidden(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
