package trial

import (
	"fmt"
	"time"

	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/taskfile"
)

// loop is what a command's failed attempts made of their progress (hang-retries,
// no-progress-restarts: docs/taskfile.md, "When trials go wrong").
type loop struct {
	hangs int // attempts found hung so far
	stuck int // failed attempts in a row that made no progress
	mark  int // how far the attempts got: the step of the kept checkpoint, or of its progress
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
// retries while its hangs stay within hang-retries.
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
	free := r.Retries == nil || c.turn.loop.hangs <= *r.Retries
	if free && hu.Released != nil {
		awaitRelease(c, attempt, hu.Released, r.ReleaseWait)
	}
	return free
}

// awaitRelease holds a hung trial's next attempt until its GPUs' memory came back, at most
// wait: it would otherwise start beside what its stopped processes still hold.
func awaitRelease(c *command, attempt int, released <-chan struct{}, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-released:
	case <-t.C:
		c.log.Mark("attempt %d: its GPU's memory has not come back after gpu-release-wait %s: the next attempt starts anyway", attempt, wait)
	}
}

// loopEnds is why a failed attempt ends its command whatever its retries allow: it was
// found hung more often than hang-retries allow, or it is the no-progress-restarts'th
// failure in a row without a new checkpoint copy (without checkpoint:, without reaching a
// step beyond the attempt before it's). "" when neither.
func loopEnds(c *command) string {
	r, l := hangRules(c), &c.turn.loop
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

// hungRetry is the reason a hung attempt that is resumed says.
func hungRetry(c *command, hu *executor.Hung) string {
	r := hangRules(c)
	of := "no limit"
	if r.Retries != nil {
		of = fmt.Sprintf("hang %d of %d", c.turn.loop.hangs, *r.Retries)
	}
	return fmt.Sprintf("%s; resuming from its checkpoint (%s, no retry spent)", hu.Reason, of)
}
