package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// outputPump is the outputs' consumer: it carries events from the emitting goroutines to
// the output, which one goroutine (the pump) owns. The events wait in an event.Queue, so
// that a stdout nobody reads (a paused terminal, a slow pipe) holds up the pump alone: the
// trials run on, their lines reach their logs, and the lines the queue had no room for
// are counted and said once the pump can write again. A stdout that cannot be written at
// all (closed) is said on stderr at the end.
type outputPump struct {
	queue  *event.Queue
	out    output.Output
	w      *stdoutWriter
	logDir string // where every line is, for the notes on lines not shown
	done   chan struct{}
}

// startOutput starts the pump. Between events it ticks the output: every updateInterval
// for the live view (bashful's update-interval), four times a second otherwise.
func startOutput(o output.Options, mode output.Mode, updateInterval time.Duration, logDir string) *outputPump {
	if f, ok := o.W.(*os.File); ok { // the live view's size, which it cannot ask a wrapper
		if o.Width == nil {
			o.Width = func() int { w, _ := output.TerminalSize(f); return w }
		}
		if o.Height == nil {
			o.Height = func() int { _, h := output.TerminalSize(f); return h }
		}
	}
	w := &stdoutWriter{w: o.W}
	o.W = w
	e := &outputPump{queue: event.NewQueue(event.QueueLimits{}), out: output.New(mode, o), w: w, logDir: logDir, done: make(chan struct{})}
	if updateInterval <= 0 || mode != output.Live {
		updateInterval = 250 * time.Millisecond
	}
	go e.pump(updateInterval)
	return e
}

// Event hands ev to the pump; it never waits for it. Metrics are not drawn: the output
// shows the lines they came in.
func (e *outputPump) Event(ev event.Event, emit func(event.Event)) {
	if ev.Kind != event.TaskMetric {
		e.queue.Event(ev, emit)
	}
}

func (e *outputPump) pump(interval time.Duration) {
	defer close(e.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-e.queue.Ready():
			evs, skipped, last := e.queue.Take()
			for _, ev := range evs {
				e.out.Event(ev)
			}
			if skipped > 0 && e.w.lost > 0 {
				e.w.lost += skipped // a stdout that failed: the note would be lost too
			} else if skipped > 0 {
				e.out.Event(event.Event{Kind: event.RunStatus, Line: skippedNote(skipped, e.logDir)})
			}
			e.w.flush()
			if last {
				return
			}
		case now := <-tick.C:
			e.out.Tick(now)
			e.w.flush()
		}
	}
}

// skippedNote says that n lines were not shown, and where they are.
func skippedNote(n int, logDir string) string {
	return fmt.Sprintf("%d lines of output not shown: stdout did not take them in time; every line is in the tasks' logs in %s", n, logDir)
}

// close drains the events and ends the output with the run's results. lost says what a
// stdout that could not be written lost, "" when nothing.
func (e *outputPump) close(res *results.Run) (lost string, err error) {
	e.queue.Close()
	<-e.done
	err = e.out.Close(res)
	e.w.flush()
	if e.w.lost > 0 {
		lost = fmt.Sprintf("stdout: %v: %d lines of output lost; every line is in the tasks' logs in %s", e.w.err, e.w.lost, e.logDir)
	}
	return lost, err
}

// stdoutWriter is what the output writes to. It gathers whole lines into writes of up to
// pipeBuf bytes, which a pipe takes whole, so that lines stay whole when something else
// writes to the same stream and the pump spends one system call on many lines; the pump
// flushes it after each batch of events and each tick. A write that fails (a closed
// stdout) is counted, not passed on, so that the output goes on to its end and a stdout
// nobody reads fails neither the output nor the run; the run's end says what was lost.
// Once a write found the pipe closed, nothing more is written: it never opens again, and
// each write to it would cost a SIGPIPE.
type stdoutWriter struct {
	w      io.Writer
	buf    []byte
	lines  int   // the lines (or JSON objects, or frames) in buf
	err    error // the first write's that failed
	lost   int   // lines not written
	closed bool
}

// pipeBuf is PIPE_BUF on Linux: a write of at most this much to a pipe is never split.
const pipeBuf = 4096

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if len(s.buf)+len(p) > pipeBuf {
		s.flush()
	}
	if len(p) >= pipeBuf {
		s.write(p, 1)
		return len(p), nil
	}
	s.buf = append(s.buf, p...)
	s.lines++
	return len(p), nil
}

// flush writes what is gathered.
func (s *stdoutWriter) flush() {
	if len(s.buf) > 0 {
		s.write(s.buf, s.lines)
		s.buf, s.lines = s.buf[:0], 0
	}
}

func (s *stdoutWriter) write(p []byte, lines int) {
	if s.closed {
		s.lost += lines
		return
	}
	if _, err := s.w.Write(p); err != nil {
		if s.lost == 0 {
			s.err = err
		}
		s.lost += lines
		s.closed = errors.Is(err, syscall.EPIPE)
	}
}
