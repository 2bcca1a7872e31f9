package trial

import (
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"time"
)

// Room is a resource's side of one command: the room its trial was admitted with (GPU
// memory, host memory, a GPU's MPS server). The command tells each of its rooms of its
// attempts' processes and output, lets each add to its environment, asks each in turn what a
// failed attempt means, and has each give its details to the trial's record. GPU and host
// are two values of this one type; a new resource is a new Room, not an edit of the command.
// A room that reads progress does so from Line; one that caps a trial (MPS) does so in Env;
// one that wants its trial out for a while asks the Attempt it was handed in Begin to pause.
type Room interface {
	// Begin is told an attempt begins, before its process starts: the room forgets what the
	// attempt before said, adds where the trial runs to its start event, and is handed the
	// attempt (a, until the next Begin), of which it may ask a pause.
	Begin(start *event.Event, a Attempt)
	// Started is told the attempt's process group.
	Started(pgid int)
	// Line reads one line of the attempt's output (masked), stdout or stderr.
	Line(line string)
	// Ended is told how a failed attempt ended, before anything is said of it.
	Ended(out proc.Outcome)
	// Env adds what the room gives the command to its environment.
	Env(env []string) []string
	// Says is the room's account of a failed attempt: how it failed in the room's words
	// ("": the room has none, and the exit says it), and what the room adds to the reason.
	Says(out proc.Outcome, runallStopped bool) (cause, note string)
	// Failed is what a failed attempt means to the room; the zero Answer leaves it to the
	// next room, and to the task's retries when no room has one.
	Failed(f Failure) Answer
	// Detail adds what the room held to the trial's record.
	Detail(d *event.Detail)
}

// Attempt is the attempt that runs now, as its rooms may ask of it; safe to use from any
// goroutine (gpu-sharing: progress asks from the run's stream).
type Attempt interface {
	// Pause asks for the trial's pause at its next kept copy of its checkpoint, as the run's
	// pauser pauses one: it ends its turn paused (event.EndPause), its rooms released, and
	// waits to be resumed. It is false when the trial has no checkpoint:, when the attempt
	// no longer runs, or when a stop or a pause was asked of it already.
	Pause(reason string) bool
	// Distrust takes the trial back to the newest copy of its checkpoint kept before since
	// (its GPU's memory error came after it), while the attempt runs or once it ended: the
	// copies kept since are dropped, and none is kept as the attempt ends. Nothing without
	// checkpoint:.
	Distrust(since time.Time)
}

// Failure is a failed attempt as a room is asked about it.
type Failure struct {
	Task    *plan.Task
	Out     proc.Outcome
	Halted  bool // no new trial starts (a failure halted the run, or a signal)
	Stopped bool // a signal stopped the run
}

// Answer is what a failed attempt means to one room. Requeue and Fatal end the command:
// the first room (in the command's order) that gives one decides.
type Answer struct {
	Mark    string   // said in the trial's log as the room decides ("": nothing)
	Requeue *Requeue // the trial goes back to the line, not failed
	Fatal   error    // the trial can never run here: it fails, with no retry
	// Halted is how the trial ends where the run is halting as it concludes: stopped, with
	// this reason, not failed ("": failed, as its exit says).
	Halted string
	// Class is the failure's class as the room saw it ("": the room saw nothing of it), which
	// failclass.Of takes before the output's texts: the kernel's OOM killer, say.
	Class failclass.Class
	// GPU is the fault the room saw take the attempt's GPU out of service ("": none), which
	// failclass.Of classes gpu-fault.
	GPU string
}

// Requeue is a room's answer that its trial goes back to the line.
type Requeue struct {
	Need     uint64 // the need it goes again with
	Requeues int    // how often it went back for this room so far (0: not counted)
	Why      string // the attempt's end, as its event says
	Reason   string // why it waits again, as the scheduler says
}
