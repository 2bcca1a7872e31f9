package plan

import (
	"cmp"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Checkpoint is a trial's checkpoint: the directory its script saves to and resumes from.
// runall keeps the newest complete copy of it where every runall of the sweep reaches it,
// and restores it before the trial starts again (docs/taskfile.md#checkpoints).
type Checkpoint struct {
	Dir   string        // placeholders filled; ${VAR}s expanded as the trial runs, relative to its cwd
	Every time.Duration // how often runall looks at the directory for a change
	Wait  time.Duration // how long a pause waits for a copy of the step it needs
	Pos   Pos           // where checkpoint: is written
}

// Defaults of checkpoint:'s long form.
const (
	DefaultCheckpointEvery = time.Second
	DefaultCheckpointWait  = time.Minute
)

// rawCheckpoint is checkpoint: as written: a directory, or {dir, every, wait}.
type rawCheckpoint struct {
	dir         string
	every, wait time.Duration
	set         bool
}

var checkpointKeys = []string{"dir", "every", "wait"}

// decodeCheckpoint reads checkpoint: DIR, or its long form {dir: DIR, every: 1s, wait: 1m}.
func decodeCheckpoint(d *nodeDecoder, p nodePair) rawCheckpoint {
	c := rawCheckpoint{set: true}
	if p.value.Kind != yaml.MappingNode {
		c.dir = d.str(p)
		checkCheckpointDir(d, p.value, c.dir)
		return c
	}
	ps, _ := d.pairs(p.value, "")
	for _, q := range ps {
		switch q.name {
		case "dir":
			c.dir = d.str(nodePair{"checkpoint: dir", q.key, q.value})
			checkCheckpointDir(d, q.value, c.dir)
		case "every":
			c.every = d.duration(nodePair{"checkpoint: every", q.key, q.value}, "")
		case "wait":
			c.wait = d.duration(nodePair{"checkpoint: wait", q.key, q.value}, "")
		default:
			d.unknownKey(q, "checkpoint:", checkpointKeys)
		}
	}
	if _, ok := findPair(ps, "dir"); !ok {
		d.errorf(p.value, "checkpoint: dir: missing: the directory the trial saves its checkpoint to")
	}
	return c
}

// checkCheckpointDir refuses a directory runall cannot own: runall empties it before a
// trial that starts fresh and replaces it before one that resumes.
func checkCheckpointDir(d *nodeDecoder, at *yaml.Node, dir string) {
	switch clean := filepath.Clean(strings.TrimSpace(dir)); {
	case strings.TrimSpace(dir) == "":
		d.errorf(at, "checkpoint: want the directory the trial saves its checkpoint to and resumes from, such as ckpt/<lr>")
	case clean == "/" || clean == "." || clean == "..":
		d.errorf(at, "checkpoint: %q cannot be a trial's checkpoint directory: runall empties and replaces it; name a directory of the trial's own, such as ckpt/<lr>", dir)
	}
}

func findPair(ps []nodePair, name string) (nodePair, bool) {
	for _, p := range ps {
		if p.name == name {
			return p, true
		}
	}
	return nodePair{}, false
}

// checkpoint is c's plan checkpoint; nil when it sets none.
func (src *sources) checkpoint(c *rawTask) *Checkpoint {
	if !c.checkpoint.set {
		return nil
	}
	return &Checkpoint{Dir: c.checkpoint.dir, Every: cmp.Or(c.checkpoint.every, DefaultCheckpointEvery),
		Wait: cmp.Or(c.checkpoint.wait, DefaultCheckpointWait), Pos: src.pos(c.keys["checkpoint"])}
}

// checkCheckpoints reports two trials of a block that would share a checkpoint directory:
// each would restore the other's.
func (src *sources) checkCheckpoints(trials []*Task) {
	seen := map[string]*Task{}
	for _, t := range trials {
		if t.Checkpoint == nil || t.Search != nil {
			continue
		}
		dir := filepath.Join(t.Cwd, t.Checkpoint.Dir)
		if other, ok := seen[dir]; ok {
			src.problems = append(src.problems, Problem{t.Checkpoint.Pos, "checkpoint: " + t.Checkpoint.Dir +
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
			src.problems = append(src.problems, Problem{pos, "early-stop: " + b.EarlyStop.Method +
				" pauses trials and resumes them from their checkpoints, but trial \"" + t.Name +
				"\" has no checkpoint: give each trial checkpoint: DIR (the directory its script saves to and resumes from)"})
			return
		}
	}
}
