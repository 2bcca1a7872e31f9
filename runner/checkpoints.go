package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/checkpoint/s3store"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/trial"
)

// checkpoints keeps the checkpoint: directories of a run's trials (runner/checkpoint) where
// every runall of the sweep reaches them, and restores a trial's before each of its
// attempts: under the claims prefix with --claims; else beside the file's S3 uploads; else
// on the local disk, under the log directory's state.
type checkpoints struct {
	o checkpointOptions

	mu     sync.Mutex
	forgot map[*plan.Task]bool               // --fresh: what was kept is dropped once per trial
	live   map[*plan.Task]*checkpoint.Keeper // each running trial's keeper
	drop   map[string]bool                   // on-oom: the kept copies to drop at the next attempt (checkpoints_drop.go)
	held   []func()                          // what drops the copies ended attempts still hold for a late fault
}

// checkpointOptions is what the checkpoints take from the run.
type checkpointOptions struct {
	plan   *plan.Plan
	conn   *s3Conn // the run's one S3 client
	claims string  // --claims: checkpoints under its prefix
	local  string  // where they are kept without S3
	runID  string
	fresh  bool                  // --fresh: trials start over
	grace  time.Duration         // how long a stopped run's last copies may take
	guard  *plan.CheckpointGuard // the places no checkpoint: may be or hold
	stale  *freshState           // a copy kept before an unfinished --fresh start is dropped
}

// checkpointDir holds the trials' checkpoints under an upload destination, as
// .runall-done holds the resume markers: runall's, left alone by uploads and delete:.
const checkpointDir = ".runall-checkpoints"

// newCheckpoints is nil when no trial sets checkpoint:.
func newCheckpoints(o checkpointOptions) *checkpoints {
	for _, t := range o.plan.Trials() {
		if t.Checkpoint != nil {
			return &checkpoints{o: o, forgot: map[*plan.Task]bool{}, live: map[*plan.Task]*checkpoint.Keeper{}}
		}
	}
	return nil
}

// store is where trial t's checkpoint is kept (env: its environment, for ${VAR}s in upload
// destinations).
func (c *checkpoints) store(ctx context.Context, t *plan.Task, env []string) (checkpoint.Store, error) {
	if c.o.claims != "" {
		return c.s3(ctx, strings.TrimSuffix(c.o.claims, "/")+"/checkpoints/")
	}
	if to := s3Destination(c.o.plan, t, env); to != "" {
		return c.s3(ctx, strings.TrimSuffix(to, "/")+"/"+checkpointDir+"/")
	}
	return checkpoint.NewDir(c.o.local), nil
}

// s3Destination is the trial's own upload destination in S3, else the file's first;
// "" when it has none.
func s3Destination(p *plan.Plan, t *plan.Task, env []string) string {
	var ups []plan.Transfer
	ups = append(ups, t.Upload...)
	if p.S3 != nil {
		ups = append(ups, p.S3.Upload...)
	}
	for _, u := range ups {
		if to, err := plan.ExpandStrictEnv(u.To, env); err == nil && strings.HasPrefix(to, "s3://") {
			return to
		}
	}
	return ""
}

func (c *checkpoints) s3(ctx context.Context, prefix string) (checkpoint.Store, error) {
	client, err := c.o.conn.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	return s3store.New(client, prefix, filepath.Join(c.o.local, ".sync"))
}

// ckptAttempt is one attempt of a trial as far as its checkpoint goes.
type ckptAttempt = trial.Kept

// Begin readies an attempt of trial t whose command runs in dir with env: its checkpoint
// directory restored from the kept copy (left as it is when none is kept; emptied under
// --fresh), the variables that tell the script, and a keeper that keeps the directory as
// it changes. say tells the trial's output; adjust, when given, is told of the copy restored
// (what the trial's own record says of it, before its copies carry it on).
func (c *checkpoints) Begin(ctx context.Context, t *plan.Task, dir string, env []string, attempt int, say func(string), adjust func(*checkpoint.Manifest)) (*ckptAttempt, []string, error) {
	path, err := plan.ExpandStrictEnv(t.Checkpoint.Dir, env)
	if err != nil {
		return nil, env, fmt.Errorf("checkpoint %s: %w", t.Checkpoint.Dir, err)
	}
	if path, err = filepath.Abs(plan.TaskPath(dir, path)); err != nil {
		return nil, env, fmt.Errorf("checkpoint %s: %w", t.Checkpoint.Dir, err)
	}
	if err := c.o.guard.Check(path, dir); err != nil {
		return nil, env, fmt.Errorf("%s: checkpoint: %s: trial %q not started: %w", t.Checkpoint.Pos, t.Checkpoint.Dir, t.Name, err)
	}
	st, err := c.store(ctx, t, env)
	if err != nil {
		return nil, env, err
	}
	id := plan.Key(t)
	m, err := c.restore(ctx, t, st, id, path, say)
	if err != nil {
		return nil, env, err
	}
	env = resumeEnv(env, m)
	if m != nil && adjust != nil {
		adjust(m) // what the trial's own record says of it, before its copies carry it on
	}
	k := checkpoint.Start(ctx, checkpoint.Options{Store: st, Trial: id, Dir: path, Every: t.Checkpoint.Every,
		Writer: plan.Slug(c.o.runID) + "-a" + strconv.Itoa(attempt), RunID: c.o.runID, Base: m, Say: say, Hold: replacedHold, Held: c.hold})
	c.mu.Lock()
	c.live[t] = k
	c.mu.Unlock()
	return &ckptAttempt{Keeper: k, Base: m, Dir: path}, env, nil
}

// restore readies trial t's checkpoint directory path from what st keeps for it (id): the
// kept copy, else the directory as it is; under --fresh, at its first attempt, what was
// kept is dropped and the directory emptied, as asked.
func (c *checkpoints) restore(ctx context.Context, t *plan.Task, st checkpoint.Store, id, path string, say func(string)) (*checkpoint.Manifest, error) {
	if c.forgetOnce(t) || c.dropAsked(id) || c.staleCopy(ctx, st, id) {
		if err := checkpoint.Forget(ctx, st, id); err != nil {
			return nil, fmt.Errorf("checkpoint %s: --fresh: drop what was kept: %w", st.Where(id), err)
		}
		if err := checkpoint.Empty(path); err != nil {
			return nil, fmt.Errorf("checkpoint: --fresh: %w", err)
		}
	}
	m, err := checkpoint.Restore(ctx, st, id, path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w (the trial is not started fresh over a kept checkpoint: to start it over, %s)",
			err, startOver(st, id, path))
	}
	switch n := checkpoint.Holds(path); {
	case m != nil:
		say(fmt.Sprintf("resumed from step %d: %s restored from %s%s", m.Step, t.Checkpoint.Dir, st.Where(id), m.Version))
	case n > 0:
		say(fmt.Sprintf("checkpoint: no copy of %s is kept (%s), so its %d files are left as they are: the script may resume from them, and runall keeps copies from now on; to start the trial over, %s",
			t.Checkpoint.Dir, st.Where(id), n, startOver(st, id, path)))
	}
	return m, nil
}

// startOver says how to start one trial over: what to delete, by hand.
func startOver(st checkpoint.Store, id, path string) string {
	return fmt.Sprintf("delete %s (what runall keeps of it) and empty %s, then run again; or run again with --fresh, which starts every trial over", st.Where(id), path)
}

// resumeEnv tells the script whether it resumes, and from which step; its output is read
// line by line as it prints it, so that each step is timed against its checkpoint's files.
func resumeEnv(env []string, m *checkpoint.Manifest) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "RUNALL_RESUMED=") || strings.HasPrefix(kv, "RUNALL_RESUME_STEP=")
	})
	if m != nil {
		env = envlist.Set(env, "RUNALL_RESUMED", "1")
		env = envlist.Set(env, "RUNALL_RESUME_STEP", strconv.Itoa(m.Step))
	}
	if _, set := envlist.Lookup(env, "PYTHONUNBUFFERED"); !set {
		env = envlist.Set(env, "PYTHONUNBUFFERED", "1")
	}
	return env
}

// replacedHold is how long a kept copy a newer one replaced is held before it is dropped:
// the GPUs' health is read every 2 s, and a memory error read after a trial kept copies
// takes it back to the copy kept before (runner/gpures/room_health.go); five reads' worth,
// for a loaded machine.
const replacedHold = 10 * time.Second

// hold keeps what drops the copies an ended attempt holds for a late fault, for the run's
// end (dropHeld).
func (c *checkpoints) hold(dropNow func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = append(c.held, dropNow)
}

// dropHeld drops the copies ended attempts still hold for a late fault: every trial has
// ended, and nothing the run leaves is named by no manifest.
func (c *checkpoints) dropHeld() {
	if c == nil {
		return
	}
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.mu.Unlock()
	for _, drop := range held {
		drop()
	}
}

// End keeps what the attempt's directory holds now that its processes ended: within the
// grace period when runall was stopped, else within two minutes. It returns the step the
// newest kept copy holds (-1: none).
func (c *checkpoints) End(t *plan.Task, a *ckptAttempt, stopped bool) int {
	bound := 2 * time.Minute
	if stopped {
		bound = c.o.grace
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	kept := a.Keeper.Close(ctx)
	c.mu.Lock()
	if c.live[t] == a.Keeper {
		delete(c.live, t)
	}
	c.mu.Unlock()
	return kept
}

// forgetOnce reports, under --fresh, whether what was kept for t is still to be dropped.
func (c *checkpoints) forgetOnce(t *plan.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.o.fresh || c.forgot[t] {
		return false
	}
	c.forgot[t] = true
	return true
}

// staleCopy reports whether the copy st keeps of trial id was kept before an unfinished
// --fresh start: the sweep is finished fresh, so it is dropped as --fresh drops it.
func (c *checkpoints) staleCopy(ctx context.Context, st checkpoint.Store, id string) bool {
	if c.o.stale == nil || c.o.stale.since.IsZero() {
		return false
	}
	m, err := checkpoint.Read(ctx, st, id)
	return err == nil && m != nil && c.o.stale.stale(m.SavedAt)
}

// keeper is trial t's running attempt's keeper; nil when none runs.
func (c *checkpoints) keeper(t *plan.Task) *checkpoint.Keeper {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live[t]
}

// DropNext asks that the next attempt of the trial kept as id start with its kept copy
// dropped and its directory emptied, as --fresh does (on-oom halved its param: what it
// kept was made with the other value). It is the GPU resource's gpures.Dropper. A nil
// checkpoints (no trial has one) drops nothing.
func (c *checkpoints) DropNext(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drop == nil {
		c.drop = map[string]bool{}
	}
	c.drop[id] = true
}

// dropAsked reports whether what was kept for id is to be dropped now, and forgets the ask.
func (c *checkpoints) dropAsked(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	asked := c.drop[id]
	delete(c.drop, id)
	return asked
}
