package main_test

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestWritesGoWherePointed: --results and report -o write where the user pointed. A symlink
// is followed and stays a symlink; a FIFO is written through, not replaced by a file, and one
// that no process reads is an error, not a hang; a device (/dev/full) is written through and
// its error fails the command (as root, --results /dev/full replaced the device with a file).
// A record that cannot be written fails the run (exit 1), not only a line in its output.
func TestWritesGoWherePointed(t *testing.T) {
	t.Parallel()
	type writer struct {
		name string
		args func(path string) []string
	}
	writers := []writer{
		{"--results", func(path string) []string { return []string{"--log-dir", "logs", "--results", path, "tasks.yml"} }},
		{"report -o", func(path string) []string { return []string{"report", "-o", path, "results.json"} }},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			writesWherePointed(t, w.args)
		})
	}
}

// writesWherePointed runs a command whose args write to the path given, through a symlink,
// a FIFO with and without a reader, and /dev/full.
func writesWherePointed(t *testing.T, args func(path string) []string) {
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - cmd: echo hi\n")
	e.run("--log-dir", "logs", "--results", "results.json", "tasks.yml").wantCode(t, 0)

	// A symlink: the file it points to is written, the link stays.
	if err := os.Symlink("target.out", e.path("link.out")); err != nil {
		t.Fatal(err)
	}
	e.run(args("link.out")...).wantCode(t, 0)
	if fi, err := os.Lstat(e.path("link.out")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced")
	}
	if b, _ := os.ReadFile(e.path("target.out")); len(b) == 0 {
		t.Errorf("nothing written through the symlink")
	}

	// A FIFO with a reader: written through, still a FIFO.
	if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader := readFIFO(t, e.path("fifo"))
	e.run(args("fifo")...).wantCode(t, 0)
	eventually(t, "the whole file through the FIFO", func() bool {
		got := strings.TrimSpace(reader.String())
		return strings.HasSuffix(got, "}") || strings.HasSuffix(got, "</html>")
	})
	reader.close()
	if fi, err := os.Lstat(e.path("fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}

	// A FIFO no process reads: an error, at once.
	r := e.run(args("fifo")...)
	r.wantCode(t, 1)
	if !strings.Contains(r.stdout+r.stderr, "is a FIFO that no process reads") {
		t.Errorf("no error for a FIFO without a reader\n%v", r)
	}

	// A device: written through; /dev/full's error fails the command, the device stays.
	r = e.run(args("/dev/full")...)
	r.wantCode(t, 1)
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/full is no longer a device")
	}
	if !strings.Contains(r.stdout+r.stderr, "no space left on device") {
		t.Errorf("the write error is not said\n%v", r)
	}
}

// fifoReader reads a FIFO into a buffer until closed. It holds the FIFO open to read and
// write (Linux allows it), so that it is a reader from the start and never sees an end.
type fifoReader struct {
	syncBuffer
	f *os.File
}

func readFIFO(t *testing.T, path string) *fifoReader {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &fifoReader{f: f}
	go io.Copy(&r.syncBuffer, f)
	t.Cleanup(r.close)
	return r
}

func (r *fifoReader) close() { r.f.Close() }

// TestResultsInMissingDirRefused: --results (and report -o) in a directory that does not
// exist is refused with exit 2 before anything runs, naming the directory; runall creates
// no directory the user named (as root, a typo created one anywhere).
func TestResultsInMissingDirRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - cmd: echo hi > ran.txt\n")
	e.run("--log-dir", "logs", "--results", "results.json", "tasks.yml").wantCode(t, 0)
	_ = os.Remove(e.path("ran.txt"))
	for _, args := range [][]string{
		{"--log-dir", "logs", "--results", e.path("nonexistent/dir/r.json"), "tasks.yml"},
		{"report", "-o", e.path("nonexistent/dir/r.html"), "results.json"},
	} {
		r := e.run(args...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, "directory does not exist: "+e.path("nonexistent/dir")+": create it first") {
			t.Errorf("%v: the error does not name the directory and what to do\n%v", args, r)
		}
		if _, err := os.Stat(e.path("nonexistent")); err == nil {
			t.Errorf("%v: the directory was created", args)
		}
	}
	if _, err := os.Stat(e.path("ran.txt")); err == nil {
		t.Error("the task ran although --results was refused")
	}
}
