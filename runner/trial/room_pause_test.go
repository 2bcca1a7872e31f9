package trial

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// fakeRooms give every command the one fake room.
type fakeRooms struct{ room Room }

func (f fakeRooms) Of(*sched.Trial, *plan.Task) []Room { return []Room{f.room} }

// dirCheckpoints keep a trial's checkpoint directory in a local store, as the run's do.
type dirCheckpoints struct{ store *checkpoint.Dir }

func (c dirCheckpoints) Begin(ctx context.Context, t *plan.Task, _ string, env []string, attempt int, say func(string),
	_ func(*checkpoint.Manifest)) (*Kept, []string, error) {
	k := checkpoint.Start(ctx, checkpoint.Options{Store: c.store, Trial: "fake", Dir: t.Checkpoint.Dir, Every: t.Checkpoint.Every,
		Writer: "test-a" + strconv.Itoa(attempt), RunID: "test", Say: say})
	return &Kept{Keeper: k, Dir: t.Checkpoint.Dir}, env, nil
}

func (c dirCheckpoints) End(_ *plan.Task, a *Kept, _ bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Keeper.Close(ctx)
}

type noUploads struct{}

func (noUploads) UploadAfter(context.Context, *plan.Task, bool) {}

// pauseLauncher is a launcher whose commands' one room is room, their checkpoints kept in a
// local store.
func pauseLauncher(t *testing.T, room Room) (*Launcher, *fakeLife) {
	t.Helper()
	life := &fakeLife{}
	logs, err := OpenLogs(t.TempDir(), "", func(_ *plan.Task, p string) (string, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
	l := New(Options{Life: life, Rooms: fakeRooms{room}, Logs: logs, Uploads: noUploads{}, Mask: noMask{},
		Checkpoints: dirCheckpoints{checkpoint.NewDir(t.TempDir())},
		Procs:       Processes{Table: proc.NewTable(), Running: executor.NewRunning(5 * time.Second), Grace: 5 * time.Second}})
	return l, life
}

// TestFakeRoomAsksPause: a room that asks for its trial's pause on a line of its output
// has the attempt paused at its next kept checkpoint: it ends paused, not failed, and the
// scheduler is told it paused.
func TestFakeRoomAsksPause(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	task := &plan.Task{ID: 1, Name: "fake", Checkpoint: &plan.Checkpoint{Dir: ck, Every: 20 * time.Millisecond, Wait: 20 * time.Second},
		Cmd: "echo pause-me; echo 1 > " + ck + "/state; echo runall-checkpoint step=1; sleep 30"}
	room := &fakeRoom{pauseOn: "pause-me"}
	l, life := pauseLauncher(t, room)
	tr := &sched.Trial{Task: task, Attempt: 1}
	h := executor.NewHandle(l.o.Procs.Table)
	res := l.runCommand(context.Background(), tr, task, os.Environ(), false, h)
	if len(room.paused) != 1 || !room.paused[0] {
		t.Fatalf("the room's pauses were answered %v; want once, true", room.paused)
	}
	if o := res.Outcome(); o.End != event.EndPause {
		t.Fatalf("scheduler told %+v; want paused", o)
	}
	life.mu.Lock()
	defer life.mu.Unlock()
	end := life.got[len(life.got)-1]
	if end.Detail == nil || end.Detail.Signal != "SIGTERM" {
		t.Errorf("end detail %+v; want it stopped by the pause's SIGTERM, not run to its end", end.Detail)
	}
	if end.Kind != event.TaskEnded || end.End != event.EndPause || end.Status != results.StatusPaused ||
		end.Reason != "paused at step 1 (its kept checkpoint): the fake room wants it out" {
		t.Errorf("end event %v %v %q (%v); want paused at step 1 for the fake room", end.Kind, end.End, end.Reason, end.Status)
	}
}

// TestFakeRoomPauseRefusedWithoutCheckpoint: a trial without checkpoint: cannot pause; the
// room is told so, and the attempt runs on to its end.
func TestFakeRoomPauseRefusedWithoutCheckpoint(t *testing.T) {
	task := &plan.Task{ID: 1, Name: "fake", Cmd: "echo pause-me; echo done"}
	room := &fakeRoom{pauseOn: "pause-me"}
	l, life := pauseLauncher(t, room)
	tr := &sched.Trial{Task: task, Attempt: 1}
	res := l.runCommand(context.Background(), tr, task, os.Environ(), false, executor.NewHandle(l.o.Procs.Table))
	if len(room.paused) != 1 || room.paused[0] {
		t.Fatalf("the room's pauses were answered %v; want once, false", room.paused)
	}
	if !res.ok || res.end != event.EndFinal {
		t.Errorf("result %+v; want ok, final", res)
	}
	if end := life.got[len(life.got)-1]; end.Status != results.StatusOK {
		t.Errorf("end %v %q; want ok", end.Status, end.Reason)
	}
}
