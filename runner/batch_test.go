package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
)

// countingWriter counts the writes it is given.
type countingWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.b.Write(p)
}

// TestOutputBatched: a chatty trial's lines reach stdout and its log in batches, not a
// write(2) each (two per line cost a core at 110k lines/s), every one of them, in order.
//
// n stays under the output queue's 4096 lines: past them a pump that a loaded machine
// starves of CPU drops lines by design (the log keeps them), and 20,000 lines failed here
// one run in ten with six tests at once on two cores.
func TestOutputBatched(t *testing.T) {
	const n = 4000
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte("tasks:\n  - name: chatty\n    cmd: seq "+strconv.Itoa(n)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := &countingWriter{}
	res, err := Run(p, Options{Output: OutputOptions{Stdout: w, Mode: output.Plain},
		Record: RecordOptions{LogDir: filepath.Join(dir, "logs")}, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		want.WriteString("[chatty] " + strconv.Itoa(i) + "\n")
	}
	if !strings.Contains(w.b.String(), want.String()) {
		t.Errorf("the output does not hold the %d lines in order", n)
	}
	// The pump writes what is queued each time stdout takes a write, so a batch is as large
	// as the trial got ahead of stdout: a quiet machine drains every few lines (2,984 writes
	// for 20,000 lines in CI), a loaded one in far bigger batches. Unbatched output is
	// one write or two a line.
	if w.writes > n/2 {
		t.Errorf("%d writes to stdout for %d lines: not batched", w.writes, n)
	}
	log, _ := os.ReadFile(res.Tasks[0].LogFile)
	if !strings.Contains(string(log), strings.ReplaceAll(want.String(), "[chatty] ", "")) {
		t.Errorf("the task's log does not hold the %d lines in order", n)
	}
}
