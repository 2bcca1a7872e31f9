package trial

import (
	"bufio"
	"os"
	"sync"
	"time"

	"github.com/runall/runall/internal/outfile"
)

// flushEvery is how long a log line may wait in its file's buffer: a trial that prints
// 100,000 lines a second costs a write(2) per batch, not per line (a core, at one a line),
// and a log read as the trial runs is a moment behind.
const flushEvery = 100 * time.Millisecond

// batchFile is a log file written a line at a time, by one task or by several at once (a
// shared log-path), and written out in batches: when its buffer fills, flushEvery after the
// first line not written out yet, when a task that writes it ends, and as it closes.
type batchFile struct {
	mu      sync.Mutex
	f       *os.File
	bw      *bufio.Writer
	pending *time.Timer // the flush of the lines buffered now; nil when none are
	failed  *writeFailures
	warn    func(string)   // the last writer's, for a failure the timer finds
	closing func(*os.File) // told of the file written out, just before it is closed; may be nil
}

func newBatchFile(f *os.File, failed *writeFailures) *batchFile {
	return &batchFile{f: f, bw: bufio.NewWriterSize(f, 32<<10), failed: failed}
}

// openAppend opens a log-path: without waiting (a FIFO no process reads is an error, not a
// run deaf to SIGTERM: internal/outfile).
func openAppend(path string, failed *writeFailures) (*batchFile, error) {
	f, err := outfile.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	return newBatchFile(f, failed), nil
}

func (b *batchFile) write(s string, warn func(string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.warn = warn
	if _, err := b.bw.WriteString(s); err != nil {
		b.failed.note(b.f.Name(), err, warn)
		return
	}
	if b.pending == nil && b.bw.Buffered() > 0 {
		b.pending = time.AfterFunc(flushEvery, func() { b.flush(nil) })
	}
}

// flush writes out the lines buffered; warn (the failure's, else the last writer's) is told
// when they cannot be.
func (b *batchFile) flush(warn func(string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked(warn)
}

func (b *batchFile) flushLocked(warn func(string)) {
	if b.pending != nil {
		b.pending.Stop()
		b.pending = nil
	}
	if warn == nil {
		warn = b.warn
	}
	if err := b.bw.Flush(); err != nil {
		b.failed.note(b.f.Name(), err, warn)
	}
}

func (b *batchFile) close(warn func(string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked(warn)
	if b.closing != nil {
		b.closing(b.f)
	}
	if err := b.f.Close(); err != nil {
		b.failed.note(b.f.Name(), err, warn)
	}
}
