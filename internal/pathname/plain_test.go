package pathname

import "testing"

func TestWhy(t *testing.T) {
	for _, s := range []string{"lr-0.01", "b c", "s00000012-run-a1-1f", "ok_1.5", "é", ".hidden", "a..b"} {
		if why := WhyNotPlain(s); why != "" {
			t.Errorf("WhyNotPlain(%q) = %q, want it plain", s, why)
		}
	}
	for s, want := range map[string]string{
		"": "an empty name", ".": "the name .", "..": "the name ..", "../x": "a /", "a/b": "a /", `..\x`: `a \`,
		"a\x00b": "a control character (a NUL or a line break among them)", "a\nb": "a control character (a NUL or a line break among them)",
		"a\rb": "a control character (a NUL or a line break among them)", "a\tb": "a control character (a NUL or a line break among them)",
		"a\x1b[2Jb": "a control character (a NUL or a line break among them)", "a\x7f": "a control character (a NUL or a line break among them)",
		"$HOME": "a $ (which a ${VAR} expansion would read)", "${PWD}": "a $ (which a ${VAR} expansion would read)",
	} {
		if got := WhyNotPlain(s); got != want {
			t.Errorf("WhyNotPlain(%q) = %q, want %q", s, got, want)
		}
	}
}
