package plan

import (
	"cmp"
	"path/filepath"
	"strings"

	"github.com/runall/runall/internal/pathname"

	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// checkpoint is c's plan checkpoint; nil when it sets none.
func (src *sources) checkpoint(c *taskfile.Task) *Checkpoint {
	if !c.Checkpoint.Set {
		return nil
	}
	return &Checkpoint{Dir: c.Checkpoint.Dir, Every: cmp.Or(c.Checkpoint.Every, DefaultCheckpointEvery),
		Wait: cmp.Or(c.Checkpoint.Wait, DefaultCheckpointWait), Pos: src.pos(c.Keys["checkpoint"])}
}

// checkCheckpoints reports two trials of a block that would share a checkpoint directory:
// each would restore the other's. What each trial sets itself is put in: ck/${D} with env:
// {D: "<lr>"} is each trial's own. Two names are one directory when they reach one
// (pathname.Identity: a link on the way followed, a ".." taken after it); a name with a
// ${VAR} still unknown, known only at run time, is compared by its text.
func (src *sources) checkCheckpoints(trials []*Task) {
	seen := map[string]*Task{}
	for _, t := range trials {
		if t.Checkpoint == nil || t.Search != nil {
			continue
		}
		vars := ownVars(t.Env, t.Params)
		dir := envPutIn(filepath.Join(t.Cwd, t.Checkpoint.Dir), vars)
		if !strings.Contains(dir, "$") {
			cwd := pathname.Join(src.dir, envPutIn(t.Cwd, vars))
			dir = pathname.Identity(pathname.Join(cwd, envPutIn(t.Checkpoint.Dir, vars)))
		}
		if other, ok := seen[dir]; ok {
			src.problems = append(src.problems, Problem{Pos: t.Checkpoint.Pos, Msg: "checkpoint: " + t.Checkpoint.Dir +
				" is also trial \"" + other.Name + "\"'s: each trial needs a directory of its own (put a placeholder in it, such as ckpt/<lr>)"})
			continue
		}
		seen[dir] = t
	}
}

// checkPausingRule reports a block whose early-stop rule pauses trials (and resumes them
// from their checkpoints) when a trial of it has no checkpoint: to resume from.
func (src *sources) checkPausingRule(b *Task, at *yaml.Node) {
	if b.EarlyStop == nil || !b.EarlyStop.Pauses() {
		return
	}
	for _, t := range b.Parallel {
		if t.Checkpoint == nil {
			pos := b.Pos
			if at != nil {
				pos = src.pos(at)
			}
			src.problems = append(src.problems, Problem{Pos: pos, Msg: "early-stop: " + b.EarlyStop.Method +
				" pauses trials and resumes them from their checkpoints, but trial \"" + t.Name +
				"\" has no checkpoint: give each trial checkpoint: DIR (the directory its script saves to and resumes from)"})
			return
		}
	}
}
