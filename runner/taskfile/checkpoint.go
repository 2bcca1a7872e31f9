package taskfile

import (
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// CheckpointEntry is checkpoint: as written: a directory, or {dir, every, wait}.
type CheckpointEntry struct {
	Dir         string
	Every, Wait time.Duration
	Set         bool
}

var checkpointKeys = []string{"dir", "every", "wait"}

// decodeCheckpoint reads checkpoint: DIR, or its long form {dir: DIR, every: 1s, wait: 1m}.
func decodeCheckpoint(d *Decoder, p Pair) CheckpointEntry {
	c := CheckpointEntry{Set: true}
	if p.Value.Kind != yaml.MappingNode {
		c.Dir = d.Str(p)
		checkCheckpointDir(d, p.Value, c.Dir)
		return c
	}
	ps, _ := d.Pairs(p.Value, "")
	for _, q := range ps {
		switch q.Name {
		case "dir":
			c.Dir = d.Str(Pair{"checkpoint: dir", q.Key, q.Value})
			checkCheckpointDir(d, q.Value, c.Dir)
		case "every":
			c.Every = d.Duration(Pair{"checkpoint: every", q.Key, q.Value}, "")
		case "wait":
			c.Wait = d.Duration(Pair{"checkpoint: wait", q.Key, q.Value}, "")
		default:
			d.UnknownKey(q, "checkpoint:", checkpointKeys)
		}
	}
	if _, ok := findPair(ps, "dir"); !ok {
		d.Errorf(p.Value, "checkpoint: dir: missing: the directory the trial saves its checkpoint to")
	}
	return c
}

// checkCheckpointDir refuses a directory runall cannot own: runall empties it before a
// trial that starts fresh and replaces it before one that resumes.
func checkCheckpointDir(d *Decoder, at *yaml.Node, dir string) {
	switch clean := filepath.Clean(strings.TrimSpace(dir)); {
	case strings.TrimSpace(dir) == "":
		d.Errorf(at, "checkpoint: want the directory the trial saves its checkpoint to and resumes from, such as ckpt/<lr>")
	case clean == "/" || clean == "." || clean == "..":
		d.Errorf(at, "checkpoint: %q cannot be a trial's checkpoint directory: runall empties and replaces it; name a directory of the trial's own, such as ckpt/<lr>", dir)
	}
}

func findPair(ps []Pair, name string) (Pair, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Pair{}, false
}
