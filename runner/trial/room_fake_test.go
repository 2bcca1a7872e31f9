package trial

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// fakeRoom is a third resource, beside GPU and host memory: the command tells it of its
// attempts and asks it what a failed one means, with no edit of the command.
type fakeRoom struct {
	answer  Answer
	pauseOn string // a line of output on which it asks for its trial's pause
	paused  []bool // what each pause it asked was answered
	at      Attempt
	pgid    int
	lines   []string
	failed  []Failure
	ended   int
	started int
}

func (r *fakeRoom) Begin(ev *event.Event, a Attempt) {
	r.started++
	ev.Devices = []string{"FAKE-0"}
	r.at = a
}
func (r *fakeRoom) Started(pgid int) { r.pgid = pgid }
func (r *fakeRoom) Line(line string) {
	r.lines = append(r.lines, line)
	if r.pauseOn != "" && line == r.pauseOn {
		r.paused = append(r.paused, r.at.Pause("the fake room wants it out"))
	}
}
func (r *fakeRoom) Ended(proc.Outcome)        { r.ended++ }
func (r *fakeRoom) Env(env []string) []string { return append(env, "FAKE_ROOM=1") }
func (r *fakeRoom) Says(proc.Outcome, bool) (cause, note string) {
	return "", "; the fake room was full"
}
func (r *fakeRoom) Failed(f Failure) Answer { r.failed = append(r.failed, f); return r.answer }
func (r *fakeRoom) Detail(d *event.Detail)  { d.OnGPU = true }

// fakeLife is the run as a command tells it: it keeps what the stream was told.
type fakeLife struct {
	mu     sync.Mutex
	got    []event.Event
	halted bool
}

func (l *fakeLife) Emit(ev event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, ev)
}

// Result is what the stream was told of t, as the run's ledger keeps it.
func (l *fakeLife) Result(t *plan.Task) results.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := results.Task{ID: t.ID, Name: t.Name, Status: results.StatusPending}
	for _, ev := range l.got {
		switch {
		case ev.Task != t:
		case ev.Kind == event.TaskStarted:
			r.Attempts, r.Status = ev.Attempt, results.StatusRunning
			if r.StartedAt.IsZero() {
				r.StartedAt = ev.Time
			}
			if ev.Detail != nil {
				r.Resumes = ev.Detail.Resumes
			}
		case ev.Kind == event.TaskEnded && (ev.End == event.EndPause || ev.End == event.EndFinal):
			r.Status = results.StatusPaused
			if ev.End == event.EndFinal {
				r.Status = ev.Status
			}
			if ev.Detail != nil {
				r.MetricSeries, r.Resumes = ev.Detail.MetricSeries, ev.Detail.Resumes
			}
		}
	}
	return r
}
func (l *fakeLife) Halted() bool              { return l.halted }
func (l *fakeLife) StoppedBy() syscall.Signal { return 0 }
func (l *fakeLife) HaltReason() string        { return "halted" }
func (l *fakeLife) Fail(bool)                 {}
func (l *fakeLife) Skip(t *plan.Task, reason string) {
	l.Emit(event.Event{Kind: event.TaskSkipped, Task: t, Reason: reason})
}
func (l *fakeLife) Finish(t *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	l.Emit(event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: t, Status: status, ExitCode: exitCode, Reason: reason, Detail: d})
}

// noMask hides nothing.
type noMask struct{}

func (noMask) Replace(s string) string { return s }
func (noMask) Longest() int            { return 0 }
func (noMask) Learn([]string)          {}

// fakeCommand is a command of one task whose only room is room.
func fakeCommand(t *testing.T, room Room) (*command, *fakeLife) {
	t.Helper()
	task := &plan.Task{ID: 1, Name: "fake", Cmd: "train", Retries: 1}
	life := &fakeLife{}
	logs, err := OpenLogs(t.TempDir(), "", func(_ *plan.Task, p string) (string, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
	log, err := logs.open(task, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(log.Close)
	c := &command{run: told{life: life}, mask: noMask{}, t: task, cmd: task.Cmd, log: log, rooms: []Room{room},
		h: executor.NewHandle(nil), turn: turn{loop: &loop{}}}
	c.metrics.reader = metric.NewReader(&c.metrics.set, task.MetricFormats)
	c.metrics.progress = newTrialProgress(c.run, c.t, c.mask, c.log)
	t.Cleanup(func() { c.metrics.progress.stop() })
	return c, life
}

func TestFakeRoomRequeues(t *testing.T) {
	room := &fakeRoom{answer: Answer{Mark: "the fake room filled", Halted: "not requeued",
		Requeue: &Requeue{Need: 7, Requeues: 2, Why: "out of fake room; requeued", Reason: "waits for 7 fake"}}}
	c, seen := fakeCommand(t, room)
	c.started(1)
	c.onStart(4242)
	c.onLine(1, "stdout", "step 1")
	if again := c.ended(1, proc.Outcome{ExitCode: 3}, true); again {
		t.Fatal("ended asked for a retry; the fake room sent the trial back to the line")
	}
	if room.started != 1 || room.pgid != 4242 || room.ended != 1 || len(room.lines) != 1 || room.lines[0] != "step 1" {
		t.Errorf("room told: %d starts, pgid %d, %d ends, lines %q; want 1, 4242, 1, [step 1]", room.started, room.pgid, room.ended, room.lines)
	}
	if len(room.failed) != 1 || room.failed[0].Task != c.t || room.failed[0].Out.ExitCode != 3 {
		t.Fatalf("room asked %+v; want once, of exit 3", room.failed)
	}
	if c.next.requeue == nil || c.next.requeue.need != 7 || c.next.requeue.why != "waits for 7 fake" {
		t.Fatalf("command's verdict %+v; want the fake room's requeue", c.next)
	}
	if o := c.next.requeue.Outcome(); o.End != event.EndRequeue || o.Reason != "waits for 7 fake" {
		t.Errorf("scheduler told %+v; want requeued, waits for 7 fake", o)
	}
	var start, end *event.Event
	for i, ev := range seen.got {
		switch ev.Kind {
		case event.TaskStarted:
			start = &seen.got[i]
		case event.TaskEnded:
			end = &seen.got[i]
		}
	}
	if start == nil || len(start.Devices) != 1 || start.Devices[0] != "FAKE-0" {
		t.Errorf("start event %+v; want the fake room's device", start)
	}
	if end == nil || end.End != event.EndRequeue || end.Requeues != 2 || end.Reason != "out of fake room; requeued" || end.Status != results.StatusFailed {
		t.Errorf("end event %+v; want requeued twice, out of fake room", end)
	}
	if env := c.rooms[0].Env(nil); len(env) != 1 || env[0] != "FAKE_ROOM=1" {
		t.Errorf("env %q; want the fake room's", env)
	}
}

func TestFakeRoomFatalAndNote(t *testing.T) {
	never := errors.New("no fake room can hold it")
	room := &fakeRoom{answer: Answer{Fatal: never}}
	c, seen := fakeCommand(t, room)
	c.started(1)
	if again := c.ended(1, proc.Outcome{ExitCode: 1}, true); again || c.next.fatal != never {
		t.Fatalf("retry %v, fatal %v; want no retry, the fake room's error", again, c.next.fatal)
	}
	res := c.conclude(executor.Result{Outcome: proc.Outcome{ExitCode: 1}}, nil, &event.Detail{})
	if res.ok || res.end != event.EndFinal {
		t.Errorf("result %+v; want failed", res)
	}
	last := seen.got[len(seen.got)-1]
	want := "exit code 1; the fake room was full: no fake room can hold it"
	if last.End != event.EndFinal || last.Reason != want {
		t.Errorf("final event %q (end %v); want %q", last.Reason, last.End, want)
	}
	if !strings.Contains(last.Reason, "fake room was full") {
		t.Error("the room's note is not in the reason")
	}
}

func TestFakeRoomNoAnswerRetries(t *testing.T) {
	room := &fakeRoom{}
	c, _ := fakeCommand(t, room)
	c.started(1)
	if again := c.ended(1, proc.Outcome{ExitCode: 1}, true); !again {
		t.Fatal("no retry; a room with no answer leaves it to the task's retries")
	}
	if len(room.failed) != 1 || c.next.requeue != nil || c.next.fatal != nil {
		t.Errorf("asked %d times, verdict %+v; want asked once, no verdict", len(room.failed), c.next)
	}
}
