package proc

import (
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// secretMask hides one secret, as the runner's masker does.
type secretMask string

func (m secretMask) Replace(s string) string { return strings.ReplaceAll(s, string(m), "***") }
func (m secretMask) Longest() int            { return len(m) }

// readLines keeps a line whole up to maxLine however small its reader's buffer, splits a
// longer one into pieces of maxLine, and never cuts a secret in two across pieces.
func TestReadLines(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"short lines", "a\nb\r\nc", []string{"a", "b", "c"}},
		{"carriage returns", "10%\r50%\r100%\n", []string{"10%", "50%", "100%"}},
		{"longer than the buffer", long(readBuf+1) + "\n" + long(3*readBuf) + "\nend\n",
			[]string{long(readBuf + 1), long(3 * readBuf), "end"}},
		{"just under maxLine", long(maxLine-1) + "\n", []string{long(maxLine - 1)}},
		{"longer than maxLine", long(2*maxLine+5) + "\n", []string{long(maxLine), long(maxLine), long(5)}},
		{"unfinished last line", "a\n" + long(readBuf+7), []string{"a", long(readBuf + 7)}},
	} {
		for _, oneByte := range []bool{false, true} {
			r := strings.NewReader(tc.in)
			var got []string
			if oneByte {
				readLines(iotest.OneByteReader(r), nil, func(l string) { got = append(got, l) })
			} else {
				readLines(r, nil, func(l string) { got = append(got, l) })
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s (one byte at a time %v): %d lines %.40q..., want %d %.40q...", tc.name, oneByte, len(got), got, len(tc.want), tc.want)
			}
		}
	}
}

// A secret that straddles the maxLine boundary of a long line is masked all the same.
func TestReadLinesMaskAcrossPieces(t *testing.T) {
	const secret = "s3cr3t-t0k3n"
	in := strings.Repeat("x", maxLine-5) + secret + strings.Repeat("y", maxLine) + "\n"
	var got []string
	readLines(strings.NewReader(in), secretMask(secret), func(l string) { got = append(got, secretMask(secret).Replace(l)) })
	all := strings.Join(got, "")
	if strings.Contains(all, secret) || strings.Count(all, "***") != 1 || len(got) < 2 {
		t.Errorf("%d pieces, secret shown %v, masked %d times; want it masked once", len(got), strings.Contains(all, secret), strings.Count(all, "***"))
	}
}
