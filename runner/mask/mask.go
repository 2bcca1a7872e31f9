package mask

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/plan"
)

// secretPatterns are the variable names whose values are secrets unless the task file says
// more (config mask:). Matched with path.Match against the upper-cased name. A name ending
// in _KEY is a secret only where the word before says so (an API, access, private, signing
// key), so that SORT_KEY or PARTITION_KEY print as they are.
var secretPatterns = []string{
	"*_TOKEN", "*_SECRET*", "*PASSWORD*", "*PASSWD*",
	"*_API_KEY", "*_APIKEY", "*_ACCESS_KEY", "*_PRIVATE_KEY", "*_SIGNING_KEY", "*_AUTH_KEY",
	"*_ENCRYPTION_KEY", "*_CREDENTIALS", "WANDB_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
}

// isSecretName reports whether a variable called name holds a secret: one of names (the
// caller's: the S3 credentials), a default pattern, or a name or pattern of extra (config
// mask:).
func isSecretName(name string, names, extra []string) bool {
	if slices.Contains(names, name) {
		return true
	}
	upper := strings.ToUpper(name)
	for _, pats := range [][]string{secretPatterns, extra} {
		for _, pat := range pats {
			if ok, _ := path.Match(strings.ToUpper(pat), upper); ok {
				return true
			}
		}
	}
	return false
}

// Masker replaces the values of secret variables with "****" in everything runall writes:
// output lines, logs, results, task names. A task that prints its environment leaks
// nothing. It learns the secrets a task exports (a setup step's export WANDB_API_KEY=...)
// as the run goes. Safe for concurrent use.
type Masker struct {
	names []string // the caller's secret names, exactly
	extra []string // config mask:

	mu      sync.RWMutex
	values  []string
	r       *strings.Replacer
	longest int
}

// New is a Masker of the secrets in environ and the task file (variables with secret names,
// task env: values) and of also, the secrets found elsewhere (notify's: notify.Secrets).
// names are the variables the caller knows hold secrets beyond the default patterns (the
// S3 credentials runall reads: s3sync.SecretEnvNames), so that mask knows no S3 client.
// Values shorter than 4 bytes are left alone: masking "1" or "yes" would garble every line.
func New(environ, names []string, p *plan.Plan, also []string) *Masker {
	m := &Masker{names: names, extra: p.Config.Mask}
	var values []string
	for _, kv := range environ {
		if v, ok := m.secretOf(kv); ok {
			values = append(values, v)
		}
	}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		for _, e := range t.Env {
			if v, ok := m.secretOf(e.Name + "=" + e.Value); ok {
				values = append(values, v)
			}
		}
		for _, kv := range assignments(t.Cmd) {
			if v, ok := m.secretOf(kv); ok {
				values = append(values, v)
			}
		}
	})
	values = append(values, also...)
	m.add(values)
	return m
}

// secretOf is the value of NAME=value when it is a secret to mask.
func (m *Masker) secretOf(kv string) (string, bool) {
	k, v, _ := strings.Cut(kv, "=")
	return v, len(v) >= 4 && isSecretName(k, m.names, m.extra)
}

// assignmentRE is NAME=value in a shell command, the value bare or quoted.
var assignmentRE = lazyre.New(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s;&|)]+)`)

// assignments are the NAME=value pairs a command sets (export WANDB_API_KEY=...): a secret
// written into a command is a secret from the start, in the name it gives an unnamed task
// too.
func assignments(cmd string) []string {
	var out []string
	for _, m := range assignmentRE.FindAllStringSubmatch(cmd, -1) {
		out = append(out, m[1]+"="+strings.Trim(m[2], `"'`))
	}
	return out
}

// Learn adds the secrets among exported NAME=value pairs.
func (m *Masker) Learn(exported []string) {
	var values []string
	for _, kv := range exported {
		if v, ok := m.secretOf(kv); ok {
			values = append(values, v)
		}
	}
	if len(values) > 0 {
		m.add(values)
	}
}

func (m *Masker) add(values []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	values = append(slices.Clone(m.values), values...)
	// Longest first, so that a secret containing another is masked whole.
	slices.SortFunc(values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	m.values = slices.Compact(values)
	var pairs []string
	for _, v := range m.values {
		pairs = append(pairs, v, "****")
	}
	m.r = strings.NewReplacer(pairs...)
	m.longest = 0
	if len(m.values) > 0 {
		m.longest = len(m.values[0])
	}
}

// Replace masks the secrets in s.
func (m *Masker) Replace(s string) string {
	m.mu.RLock()
	r := m.r
	m.mu.RUnlock()
	return r.Replace(s)
}

// Longest is the length in bytes of the longest secret, so that a line split for its
// length is masked across the split (proc.Masker).
func (m *Masker) Longest() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.longest
}

// Tasks has every task of the plan pass the task gate (gate.go): a name taken from a
// command or from $1 may hold a token.
func (m *Masker) Tasks(p *plan.Plan) {
	for _, t := range p.Tasks {
		m.Task(t)
	}
}

// empty reports whether there is no secret to mask.
func (m *Masker) empty() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.values) == 0
}
