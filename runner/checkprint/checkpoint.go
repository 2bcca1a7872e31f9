package checkprint

import (
	"fmt"
	"strings"

	"github.com/runall/runall/runner/plan"
)

// checkpointAttr is a trial's checkpoint: among its attributes: the directory, and how often
// it is looked at and how long a pause waits where they are not the defaults.
func checkpointAttr(c *plan.Checkpoint) string {
	s := "checkpoint " + c.Dir
	if c.Every != 0 && c.Every != plan.DefaultCheckpointEvery {
		s += " every " + compactDuration(c.Every)
	}
	if c.Wait != 0 && c.Wait != plan.DefaultCheckpointWait {
		s += " wait " + compactDuration(c.Wait)
	}
	return s
}

// These are functions, not methods of Plan: its methods are few by rule (make check).

// describeCheckpoints says, once for a block whose trials keep checkpoints, where their
// copies are kept and what runall does to each trial's directory before an attempt: a
// newcomer reads it in check before runall touches the directory. "" when none keeps one.
func describeCheckpoints(p *plan.Plan, block *plan.Task) string {
	n := 0
	for _, t := range block.Parallel {
		if t.Checkpoint != nil {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("checkpoints (%s): copies kept %s; before each attempt the newest copy "+
		"replaces the trial's directory, and the files in it that the copy does not hold are deleted; "+
		"with no copy kept, the directory is left as it is; --fresh drops the copies and empties it",
		plural(n, "trial", "trials"), checkpointsKept(p, block))
}

// checkpointsKept is where a block's trials' copies are kept, as the run decides it: under
// the claims prefix, else under the S3 upload destination (the trial's own, else the file's
// first), else in the log directory.
func checkpointsKept(p *plan.Plan, block *plan.Task) string {
	const claims = "under the claims prefix, checkpoints/<trial>/"
	if p.Config.Claims != "" {
		return "under the claims prefix " + strings.TrimSuffix(p.Config.Claims, "/") + "/checkpoints/<trial>/"
	}
	dests := map[string]bool{}
	for _, t := range block.Parallel {
		if t.Checkpoint != nil {
			dests[s3Destination(p, t)] = true
		}
	}
	where := "under each trial's S3 upload destination, .runall-checkpoints/<trial>/"
	if len(dests) == 1 {
		for d := range dests {
			where = "under " + strings.TrimSuffix(d, "/") + "/.runall-checkpoints/<trial>/"
			if d == "" {
				where = "in the log directory, <log-dir>/state/checkpoints/<trial>/"
			}
		}
	}
	return where + " (with --claims: " + claims + ")"
}

// s3Destination is t's own upload destination in S3, else the file's first; "" when none
// (runner's s3Destination, which expands ${VAR}s as the trial runs, decides it the same way).
func s3Destination(p *plan.Plan, t *plan.Task) string {
	ups := append([]plan.Transfer(nil), t.Upload...)
	if p.S3 != nil {
		ups = append(ups, p.S3.Upload...)
	}
	for _, u := range ups {
		if strings.HasPrefix(u.To, "s3://") {
			return u.To
		}
	}
	return ""
}
