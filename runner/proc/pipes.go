package proc

import (
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Once the shell is gone, its pipes are read until they end, or until no line has come for
// drainQuiet (a background process holds them), or for drainMost at most (one that never
// stops writing). A slow consumer of the lines keeps them coming, so its lines are not lost:
// quiet counts from the end of the last line handed on, never while one is being handed on.
const (
	drainQuiet = 2 * time.Second
	drainMost  = 30 * time.Second
)

// pipes are a command's stdout and stderr, read line by line.
type pipes struct {
	stdout, stderr *os.File
	lastLine       atomic.Int64 // unix nanoseconds of the last line handed on
	handing        atomic.Bool  // a line is being handed on now
}

func newPipes(c *exec.Cmd) (*pipes, error) {
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		stdoutR.Close()
		stdoutW.Close()
		return nil, err
	}
	c.Stdin = nil
	c.Stdout, c.Stderr = stdoutW, stderrW
	return &pipes{stdout: stdoutR, stderr: stderrR}, nil
}

// read calls onLine for every line of either stream, one line at a time, so that the log
// file and the events keep each stream's order. The group is done when both streams end.
func (p *pipes) read(mask Masker, onLine func(stream, line string)) *sync.WaitGroup {
	var mu sync.Mutex
	emit := func(stream, line string) {
		mu.Lock()
		p.handing.Store(true)
		onLine(stream, line)
		p.lastLine.Store(time.Now().UnixNano())
		p.handing.Store(false)
		mu.Unlock()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); readLines(p.stdout, mask, func(l string) { emit("stdout", l) }) }()
	go func() { defer readers.Done(); readLines(p.stderr, mask, func(l string) { emit("stderr", l) }) }()
	return &readers
}

// drain reads the pipes until they end once the shell is gone, then stops reading
// whatever background process still holds them: after quiet without a line, or at most.
func (p *pipes) drain(readers *sync.WaitGroup, quiet, most time.Duration) {
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	deadline := time.Now().Add(most)
	tick := time.NewTicker(quiet / 8)
	defer tick.Stop()
	for {
		select {
		case <-drained:
			p.closeRead()
			return
		case now := <-tick.C:
			since := now.Sub(time.Unix(0, max(p.lastLine.Load(), deadline.Add(-most).UnixNano())))
			if p.handing.Load() {
				since = 0
			}
			if since >= quiet || now.After(deadline) {
				p.closeRead()
				<-drained
				return
			}
		}
	}
}

func (p *pipes) closeRead() {
	p.stdout.Close()
	p.stderr.Close()
}

// maxLine caps one output line; longer lines are split rather than held in memory.
const maxLine = 64 << 10

// readBuf is what each pipe's reader holds. It is small because every running attempt
// has two readers and most lines are short: a line longer than it is gathered in
// readLines' partial (up to maxLine) instead. With readers of maxLine, 8 trials at once
// held 1 MiB and 1000 short trials allocated 128 MiB, which set the pace of the GC and
// raised runall's peak RSS (docs/benchmarks.md, the core benchmark).
const readBuf = 4 << 10
