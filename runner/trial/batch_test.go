package trial

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLogFlushedWhileRunning: a log's lines are written out within flushEvery of being
// written, before the task ends, and as it closes.
func TestLogFlushedWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatchFile(f, &writeFailures{})
	b.write("one\n", nil)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := os.ReadFile(path); string(got) == "one\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a buffered line was never written out")
		}
	}
	b.write("two\n", nil)
	b.close(nil)
	if got, _ := os.ReadFile(path); string(got) != "one\ntwo\n" {
		t.Errorf("after close: %q", got)
	}
}
