// The one plain-name rule is for a value that becomes one element of a path or of an
// object key: a trial's folder of checkpoints, a copy's version, a board's rule or trial, a
// sampled value put where a placeholder stands in a path. Such a value names one place and
// nothing else: it cannot climb out of it, cross into a sibling, hide a line from the log, or
// be read again by a ${VAR} expansion.

package pathname

import "strings"

// WhyNotPlain says why s cannot be one plain name ("" when it can): it is empty, "." or "..", or
// holds a / or \, a control character (NUL, a line break, an escape, DEL) or a $. Spaces and
// every other printable character are plain. The answer is a noun phrase ("a /"), for the
// caller's sentence.
func WhyNotPlain(s string) string {
	switch {
	case s == "":
		return "an empty name"
	case s == "." || s == "..":
		return "the name " + s
	case strings.Contains(s, "/"):
		return "a /"
	case strings.Contains(s, `\`):
		return `a \`
	case strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0:
		return "a control character (a NUL or a line break among them)"
	case strings.Contains(s, "$"):
		return "a $ (which a ${VAR} expansion would read)"
	}
	return ""
}
