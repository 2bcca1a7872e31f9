package proc

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
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
		{"carriage returns", "10%\r50%\r100%\n", []string{"10%\r", "50%\r", "100%"}},
		{"a bar as tqdm draws it", "\r  0%| 0/2\r 50%| 1/2\r100%| 2/2\n", []string{"  0%| 0/2\r", " 50%| 1/2\r", "100%| 2/2"}},
		{"an update at the end", "10%\r20%\r", []string{"10%\r", "20%"}},
		{"crlf", "a\r\nb\r\n\r\nc", []string{"a", "b", "", "c"}},
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

// A bar's update is handed on as the next one starts, not held until its line ends: a bar
// that takes an hour ends its line once, at the end.
func TestReadLinesBarBeforeNewline(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan string, 8)
	go readLines(pr, nil, func(l string) { got <- l })
	go pw.Write([]byte("\r 10%| 1/10\r 20%| 2/10"))
	select {
	case l := <-got:
		if l != " 10%| 1/10\r" {
			t.Fatalf("first piece %q, want the first update with its \\r", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the update was held back until the line ends")
	}
	pw.Close()
	if l := <-got; l != " 20%| 2/10" {
		t.Fatalf("last piece %q, want the last state as a line", l)
	}
}

// From a pipe, a bar's newest state is handed on once it stood still for drawnWait, before
// the next update or the newline that ends it: a loop of s/it draws its next state minutes
// later. The newline then ends the line with that state; Keras's backspaces draw nothing;
// text printed after the bar on its line makes the line all it shows.
func TestReadLinesDrawnStateFromPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string, 8)
	go readLines(r, nil, func(l string) { got <- l })
	next := func(want string) {
		t.Helper()
		select {
		case l := <-got:
			if l != want {
				t.Fatalf("piece %q, want %q", l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no piece; want %q", want)
		}
	}
	w.Write([]byte("\r 1/4 [==>...] - ETA: 3s"))
	next(" 1/4 [==>...] - ETA: 3s\r")
	w.Write([]byte("\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\r 2/4 [=====>.] - ETA: 2s"))
	next(" 2/4 [=====>.] - ETA: 2s\r")
	w.Write([]byte("\n"))
	next(" 2/4 [=====>.] - ETA: 2s")
	w.Write([]byte("\r 3/4 [=======>] - ETA: 1s"))
	next(" 3/4 [=======>] - ETA: 1s\r")
	w.Write([]byte("{'loss': 0.5}\n")) // printed after the bar, on its line
	next(" 3/4 [=======>] - ETA: 1s{'loss': 0.5}")
	w.Write([]byte("done\n"))
	next("done")
	w.Close()
}
