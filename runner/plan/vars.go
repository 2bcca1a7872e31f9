package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// Where an empty value would change what is written or deleted (an S3 URL, a transfer's
// local path, url:, metrics:, cwd:, notify's url), a ${VAR} must be set: "s3://b/${PREFIX}"
// with PREFIX unset would be the bucket's root, "${OUT}/" would be "/". Such a variable is
// an error before anything runs (Plan.CheckVars, which check and run call) and again when
// the value is expanded (ExpandStrict), never an empty string. ${VAR:-default} is the way
// to say that a variable may be missing.

// ErrUnsetVar is a variable that is unset or empty where a value must not be.
var ErrUnsetVar = errors.New("is unset or empty")

// UnsetVarError names the variable ExpandStrict found unset or empty.
type UnsetVarError struct{ Name string }

func (e *UnsetVarError) Error() string {
	return fmt.Sprintf("${%s} %v (set it, or write ${%s:-default})", e.Name, ErrUnsetVar, e.Name)
}

func (e *UnsetVarError) Unwrap() error { return ErrUnsetVar }

// RunVars are the variables runall sets itself, for a task's values or the whole run's.
var RunVars = []string{"RUNALL_RUN_ID", "RUNALL_LOG_DIR", "RUNALL_SHARD", "RUNALL_TASK_NAME", "RUNALL_TASK_ID"}

// ExpandStrict expands $VAR, ${VAR} and ${VAR:-default} (the default when VAR is unset or
// empty, taken as written) in s. A variable that is unset or empty without a default is an
// *UnsetVarError, the first one met.
func ExpandStrict(s string, lookup func(string) (string, bool)) (string, error) {
	var firstErr error
	out := expandWith(s, func(name, def string, hasDef bool) string {
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		if hasDef {
			return def
		}
		if firstErr == nil {
			firstErr = &UnsetVarError{Name: name}
		}
		return ""
	})
	return out, firstErr
}

// Expand expands $VAR, ${VAR} and ${VAR:-default} in s; an unset variable without a
// default is empty, as in os.Expand. It is how env: values are expanded.
func Expand(s string, lookup func(string) (string, bool)) string {
	return expandWith(s, func(name, def string, hasDef bool) string {
		v, _ := lookup(name)
		if v == "" && hasDef {
			return def
		}
		return v
	})
}

// Vars lists the variables s refers to without a default, in order.
func Vars(s string) []string {
	var names []string
	expandWith(s, func(name, _ string, hasDef bool) string {
		if !hasDef {
			names = append(names, name)
		}
		return ""
	})
	return names
}

// expandWith is os.Expand with ${NAME:-default}: value gives each reference's replacement.
// A $ not followed by a name or a brace is kept.
func expandWith(s string, value func(name, def string, hasDef bool) string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				break
			}
			inner := s[i+2 : i+end]
			name, def, hasDef := strings.Cut(inner, ":-")
			if !isVarName(name) {
				b.WriteString(s[i : i+end+1])
			} else {
				b.WriteString(value(name, def, hasDef))
			}
			i += end + 1
			continue
		}
		n := 0
		for i+1+n < len(s) && isVarByte(s[i+1+n], n == 0) {
			n++
		}
		if n == 0 {
			b.WriteByte('$')
			i++
			continue
		}
		b.WriteString(value(s[i+1:i+1+n], "", false))
		i += 1 + n
	}
	return b.String()
}

func isVarByte(c byte, first bool) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || !first && c >= '0' && c <= '9'
}

func isVarName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isVarByte(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}

// IsBucketRoot reports whether url is an s3:// URL of a whole bucket (no key prefix).
func IsBucketRoot(url string) bool {
	rest, ok := strings.CutPrefix(url, "s3://")
	_, key, _ := strings.Cut(rest, "/")
	return ok && strings.Trim(key, "/") == ""
}

// CheckDeleteRoot refuses an upload with delete: true to a whole bucket, unless the entry
// says whole-bucket: true: it deletes every object of the bucket not under From.
func CheckDeleteRoot(t Transfer, to string) error {
	if t.Delete && !t.WholeBucket && IsBucketRoot(to) {
		return fmt.Errorf("upload to %s with delete: true would delete every other object of the bucket: "+
			"upload under a prefix, or say whole-bucket: true", to)
	}
	return nil
}

// CheckVars reports every ${VAR} that would expand to nothing where a value must not be
// empty, against environ (runall's environment), runall's own variables and each task's
// env:. A variable a task's command may set (NAME= appears in one) is left to be checked
// when metrics: is read, since an earlier task may export it. nil when all is well, else
// a *FileError naming each key, its place and the variable.
func (p *Plan) CheckVars(environ []string) error {
	base := runVarsSet(environ)
	var problems []Problem
	check := func(key, value string, pos Pos, env map[string]string) {
		for _, name := range Vars(value) {
			if env[name] == "" {
				problems = append(problems, Problem{Pos: pos, Msg: fmt.Sprintf("%s: ${%s} is unset or empty: %q would expand to %q "+
					"(set it, or write ${%s:-default})", key, name, value, Expand(value, lookupIn(env)), name)})
			}
		}
	}
	transfers := func(where string, ts []Transfer, env map[string]string) {
		for _, t := range ts {
			check(where+": from", t.From, cmpPos(t.FromPos, t.Pos), env)
			check(where+": to", t.To, cmpPos(t.ToPos, t.Pos), env)
			if !strings.Contains(t.To, "$") {
				if err := CheckDeleteRoot(t, t.To); err != nil {
					problems = append(problems, Problem{Pos: cmpPos(t.ToPos, t.Pos), Msg: err.Error()})
				}
			}
		}
	}
	if p.S3 != nil {
		transfers("s3: download", p.S3.Download, base)
		transfers("s3: upload", p.S3.Upload, base)
	}
	if n := p.Config.Notify; n != nil {
		check("notify: url", n.URL, n.Pos, base)
	}
	check("config: log-path", p.Config.LogPath, p.Config.LogPathPos, base)
	exportable := p.settable()
	sampled := searchTemplates(p.Tasks)
	Walk(p.Tasks, func(t *Task) {
		tbase := base
		if sampled[t] {
			tbase = withSettable(base, paramRefs(t))
		}
		env := taskVars(tbase, t)
		transfers("upload", t.Upload, env)
		check("url", t.URL, t.keyPos("url"), env)
		check("cwd", t.Cwd, t.keyPos("cwd"), env)
		check("log-path", t.LogPath, t.keyPos("log-path"), env)
		menv := env
		if len(exportable) > 0 {
			menv = withSettable(env, exportable)
		}
		check("metrics", t.Metrics, t.keyPos("metrics"), menv)
		if t.Checkpoint != nil {
			check("checkpoint", t.Checkpoint.Dir, t.Checkpoint.Pos, env)
		}
	})
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
	return &FileError{Problems: slices.CompactFunc(problems, func(a, b Problem) bool { return a == b })}
}

// runVarsSet is environ as a map, with runall's own variables (RunVars) set.
func runVarsSet(environ []string) map[string]string {
	base := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		base[k] = v
	}
	for _, name := range RunVars {
		base[name] = "set"
	}
	return base
}

// taskVars is base with a task's params (ParamVar) and env: as its command gets them
// (values expanded in order).
func taskVars(base map[string]string, t *Task) map[string]string {
	if len(t.Env) == 0 && len(t.Params) == 0 {
		return base
	}
	env := make(map[string]string, len(base)+len(t.Env)+len(t.Params))
	for k, v := range base {
		env[k] = v
	}
	for _, p := range t.Params {
		env[ParamVar(p.Name)] = p.Value
	}
	for _, e := range t.Env {
		env[e.Name] = Expand(e.Value, lookupIn(env))
	}
	return env
}

// searchTemplates are the search: templates of tasks and their steps: their params are the
// sampler's, known only as it hands out each trial.
func searchTemplates(tasks []*Task) map[*Task]bool {
	out := map[*Task]bool{}
	Walk(tasks, func(t *Task) {
		if t.Search != nil {
			Walk([]*Task{t}, func(s *Task) { out[s] = true })
		}
	})
	return out
}

// paramRefs are the params' variables (ParamVar) t's texts refer to, each as written: in a
// search: template a ${RUNALL_PARAM_<name>} is its placeholder, which the sampler fills (a
// trial it gives no value is refused, Instantiate).
func paramRefs(t *Task) map[string]string {
	out := map[string]string{}
	for _, kt := range t.valueTexts() {
		for _, name := range Vars(kt.text) {
			if strings.HasPrefix(name, ParamVar("")) {
				out[name] = "${" + name + "}"
			}
		}
	}
	return out
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := env[name]; return v, ok }
}

// settable are the names some task's command may set ("NAME=" appears in it).
func (p *Plan) settable() map[string]string {
	out := map[string]string{}
	Walk(p.Tasks, func(t *Task) {
		for i := strings.IndexByte(t.Cmd, '='); i > 0; {
			j := i
			for j > 0 && isVarByte(t.Cmd[j-1], false) {
				j--
			}
			if j < i && isVarName(t.Cmd[j:i]) {
				out[t.Cmd[j:i]] = "${" + t.Cmd[j:i] + "}" // shown as it is written
			}
			next := strings.IndexByte(t.Cmd[i+1:], '=')
			if next < 0 {
				break
			}
			i += 1 + next
		}
	})
	return out
}

// withSettable is env with the names a command may set counted as set.
func withSettable(env, settable map[string]string) map[string]string {
	out := make(map[string]string, len(env)+len(settable))
	for k, v := range settable {
		out[k] = v
	}
	for k, v := range env {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func cmpPos(p, fallback Pos) Pos {
	if p.Line == 0 {
		return fallback
	}
	return p
}

// keyPos is where key is written in the task's entry, else the entry's place.
func (t *Task) keyPos(key string) Pos {
	if p, ok := t.KeyPos[key]; ok {
		return p
	}
	return t.Pos
}

// valueNode is the value of key in the mapping n, nil when it has none.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	n = taskfile.ResolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return taskfile.ResolveAlias(n.Content[i+1])
		}
	}
	return nil
}
