package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// A task's identity (Task.Key) is defined here, once: where it stands in the file (its name
// path, or the template and number a sampler gave it) and everything that changes what it
// does. Two files whose trial differs in any of these hold two different trials: --claims
// takes them for two sweeps, resume markers and recorded durations do not carry over, and
// checkpoints (kept by Key) are not restored into the other. What only changes how runall
// shows or admits it (its tags, log-path:, show-output, ignore-failure, early-stop) is not
// in it; a parallel block's identity holds its trials'.

// digest is the identity of t at place, from its settings as built; its steps' and trials'
// Keys must be set.
func (t *Task) digest(place string) string {
	h := sha256.New()
	field(h, "place", place)
	field(h, "cmd", t.Cmd, t.URL, t.MD5, strconv.FormatBool(t.Sudo), t.Cwd)
	for _, e := range t.Env {
		field(h, "env", e.Name, e.Value)
	}
	for _, p := range t.Params {
		field(h, "param", p.Name, p.Value)
	}
	field(h, "run", t.Timeout.String(), strconv.Itoa(t.Retries), t.Metrics)
	if g := t.GPU; g != nil {
		field(h, "gpu", strconv.FormatUint(g.Memory, 10), strconv.FormatBool(g.Auto), strconv.Itoa(g.Devices), strconv.FormatBool(g.CapToNeed))
	}
	if m := t.Host; m != nil {
		field(h, "memory", strconv.FormatUint(m.Memory, 10), strconv.FormatBool(m.Auto))
	}
	for _, u := range t.Upload {
		field(h, "upload", u.From, u.To, strings.Join(u.Exclude, "\x01"), u.Every.String(), strconv.FormatBool(u.Delete))
	}
	for _, s := range t.Steps {
		field(h, "step", s.Key)
	}
	for _, c := range t.Parallel {
		field(h, "trial", c.Key)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// field hashes one setting: its name and values, each ended by a NUL (no value holds one:
// the loader refuses them), the setting by a newline.
func field(h hash.Hash, name string, values ...string) {
	h.Write([]byte(name))
	for _, v := range values {
		h.Write([]byte{0})
		h.Write([]byte(v))
	}
	h.Write([]byte{'\n'})
}
