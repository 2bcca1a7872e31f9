package trial

import (
	"fmt"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/taskfile"
)

// loop is what a command's failed attempts made of their progress (hang-retries,
// no-progress-restarts: docs/taskfile.md, "When trials go wrong"), kept across its trial's
// admissions: a hung attempt sends its trial back to the line, and the next admission
// counts on from here.
type loop struct {
	hangs int // attempts found hung so far
	stuck int // failed attempts in a row that made no progress
	mark  int // how far the attempts got: the step of the kept checkpoint, or of its progress
	spent int // retries spent in earlier admissions
}

// loops are the launcher's loop of each command, by task ID, for the run.
type loops struct {
	mu   sync.Mutex
	byID map[int]*loop
}

// of is t's loop, made on its first admission. A command runs on one goroutine at a time,
// so the loop itself needs no lock.
func (ls *loops) of(t *plan.Task) *loop {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byID == nil {
		ls.byID = map[int]*loop{}
	}
	l := ls.byID[t.ID]
	if l == nil {
		l = &loop{}
		ls.byID[t.ID] = l
	}
	return l
}

// hangRules are t's rules of hang detection and crash loops; the defaults where the plan
// gave it none.
func hangRules(c *command) taskfile.Hang {
	if c.t.Faults == nil {
		return taskfile.DefaultHang()
	}
	return c.t.Faults.Hang
}

// freeAttempt is the executor's Free: an attempt the hang watch ended (executor.Hung) is
// classed hung, its dump goes to the trial's log, and it spends none of the command's
// retries while its hangs stay within hang-retries (its trial goes back to the line:
// hungRequeue).
func freeAttempt(c *command, n int) bool {
	attempt := c.turn.before + n
	hu := c.h.TakeHung(attempt)
	if hu == nil {
		return false
	}
	c.next.class, c.next.hung = failclass.Hung, hu
	c.turn.loop.hangs++
	c.log.Mark("attempt %d: %s", attempt, hu.Reason)
	if hu.Dump != "" {
		c.log.Mark("attempt %d: what its processes were doing:\n%s", attempt, hu.Dump)
	}
	r := hangRules(c)
	return r.Retries == nil || c.turn.loop.hangs <= *r.Retries
}

// hungRequeue sends a hung attempt's trial back to the front of the line, to resume from its
// checkpoint wherever it is admitted next: its GPUs take no trial until its stopped
// processes left them (the hang watch held them: admit.Release.HoldUntilGone, at most
// gpu-release-wait, and said when they do not come back), so the next admission may well be
// another GPU's. It spends no retry.
func hungRequeue(c *command, attempt int, out proc.Outcome, hu *executor.Hung) {
	r := hangRules(c)
	of := "no limit"
	if r.Retries != nil {
		of = fmt.Sprintf("hang %d of %d", c.turn.loop.hangs, *r.Retries)
	}
	from := "from its start"
	if c.t.Checkpoint != nil {
		from = "from its checkpoint"
	}
	why := fmt.Sprintf("%s; requeued, to resume %s (%s, no retry spent)", hu.Reason, from, of)
	c.requeued(attempt, out, 0, why)
	c.next.requeue = &Result{end: event.EndRequeue, why: why}
}

// loopEnds is why a failed attempt ends its command whatever its retries allow: it was
// found hung more often than hang-retries allow, or it is the no-progress-restarts'th
// failure in a row without a new checkpoint copy (without checkpoint:, without reaching a
// step beyond the attempt before it's). "" when neither.
func loopEnds(c *command) string {
	r, l := hangRules(c), c.turn.loop
	if c.next.hung != nil && r.Retries != nil && l.hangs > *r.Retries {
		return fmt.Sprintf("hung %d times (hang-retries: %d)", l.hangs, *r.Retries)
	}
	mark, what := c.turn.kept, "a new checkpoint copy"
	if c.t.Checkpoint == nil {
		mark, what = 0, "reaching a step beyond its previous attempt's"
		if p, ok := c.metrics.progress.reader.Progress(); ok {
			mark = int(p.N)
		}
	}
	if mark > l.mark {
		l.mark, l.stuck = mark, 0
		return ""
	}
	l.stuck++
	if r.NoProgress > 0 && l.stuck >= r.NoProgress {
		return fmt.Sprintf("crash loop: failed %d times in a row without %s (no-progress-restarts: %d)", l.stuck, what, r.NoProgress)
	}
	return ""
}
