// Package search talks to a sampler the user runs: search: {ask, tell} in a task file. ask
// prints a trial as JSON, in Optuna's shape ({"number": 3, "params": {"lr": 0.01}}); tell is
// run after the trial with its number, objective value and state in its environment. So
// Optuna's own CLI (TPE, CMA-ES, ...) chooses the params while runall packs and runs the
// trials.
package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// States a trial is told with, in Optuna's words.
const (
	StateComplete = "complete"
	StatePruned   = "pruned"
	StateFail     = "fail"
)

// Trial is one trial a sampler handed out.
type Trial struct {
	Number int
	Params []plan.Param // in the order the sampler printed them
}

// Sampler runs a search block's ask and tell commands.
type Sampler struct {
	Spec *plan.Search
	Dir  string   // where the commands run: the task file's directory
	Env  []string // runall's environment; the commands' variables are added to it
}

// maxOutput bounds what is kept of a command's output.
const maxOutput = 1 << 20

// Ask runs ask and reads the trial it prints: the last line of its stdout that is a JSON
// object. An ask that fails, takes longer than its timeout, prints no trial or more than
// maxOutput is an error that names the command and says what it printed.
func (s Sampler) Ask(ctx context.Context) (Trial, error) {
	stdout, stderr, err := s.run(ctx, s.Spec.Ask, nil)
	if err != nil {
		return Trial{}, fmt.Errorf("search: ask %s: %w%s", shown(s.Spec.Ask), err, said(stdout, stderr))
	}
	t, err := ParseTrial(stdout)
	if err != nil {
		return Trial{}, fmt.Errorf("search: ask %s: %w", shown(s.Spec.Ask), err)
	}
	return t, nil
}

// Tell runs tell with RUNALL_TRIAL_NUMBER, RUNALL_OBJECTIVE_VALUE (the first objective's
// value), RUNALL_OBJECTIVE_VALUES (every objective's, in order, separated by spaces: for
// optuna tell --values) and RUNALL_TRIAL_STATE set; the values are "" where there are none.
func (s Sampler) Tell(ctx context.Context, number int, values []string, state string) error {
	first := ""
	if len(values) > 0 {
		first = values[0]
	}
	vars := []string{"RUNALL_TRIAL_NUMBER=" + strconv.Itoa(number), "RUNALL_OBJECTIVE_VALUE=" + first,
		"RUNALL_OBJECTIVE_VALUES=" + strings.Join(values, " "), "RUNALL_TRIAL_STATE=" + state}
	if stdout, stderr, err := s.run(ctx, s.Spec.Tell, vars); err != nil {
		return fmt.Errorf("search: tell %s (trial %d, %s): %w%s", shown(s.Spec.Tell), number, state, err, said(stdout, stderr))
	}
	return nil
}

// ErrCut is an ask or tell that printed more than maxOutput on stdout or stderr.
var ErrCut = fmt.Errorf("it printed more than %d MiB, of which the rest was left out", maxOutput>>20)

// run runs cmd in a process group of its own, which is killed, all of it, when ctx ends or
// the timeout passes: a sampler that hangs (or leaves a child holding its pipes) cannot hold
// the sweep or a stop.
func (s Sampler) run(ctx context.Context, cmd string, vars []string) (stdout, stderr []byte, err error) {
	timeout := cmp.Or(s.Spec.Timeout, plan.DefaultSearchTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, proc.Shell(), "-c", cmd)
	c.Dir = s.Dir
	c.Env = append(append([]string(nil), s.Env...), vars...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second // a child that keeps the pipes open does not hold Wait
	var out, errb bytes.Buffer
	lo, le := &limited{w: &out, n: maxOutput}, &limited{w: &errb, n: maxOutput}
	c.Stdout, c.Stderr = lo, le
	err = c.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("no answer within %v (search: timeout): killed", timeout)
	case ctx.Err() != nil:
		err = fmt.Errorf("stopped: %w", ctx.Err())
	case err == nil && (lo.cut || le.cut):
		err = ErrCut
	}
	return out.Bytes(), errb.Bytes(), err
}

// shown is a command as an error quotes it: its first line, as written (a multi-line
// command's lines, each escaped by %q, were unreadable), and how many lines follow.
func shown(cmd string) string {
	first, rest, more := strings.Cut(strings.TrimSpace(cmd), "\n")
	if !more {
		return "`" + first + "`"
	}
	return fmt.Sprintf("`%s` (and %d more lines)", first, strings.Count(rest, "\n")+1)
}

// said is the end of what a failed command printed, stderr then stdout, for its error.
func said(stdout, stderr []byte) string {
	var parts []string
	blank := 0 // bytes of white space only, on a stream that printed nothing else
	for _, out := range []struct {
		name string
		b    []byte
	}{{"stderr", stderr}, {"stdout", stdout}} {
		s := strings.TrimSpace(string(out.b))
		if s == "" {
			blank += len(out.b)
			continue
		}
		lines := strings.Split(s, "\n")
		if len(lines) > 5 {
			lines = lines[len(lines)-5:]
		}
		parts = append(parts, "\n  "+out.name+": "+strings.Join(lines, "\n  "))
	}
	switch {
	case len(parts) == 0 && blank > 0:
		return fmt.Sprintf(": it printed only white space (%d bytes)", blank)
	case len(parts) == 0:
		return ": it printed nothing"
	}
	return ": it printed:" + strings.Join(parts, "")
}

// ParseTrial reads a trial from ask's output: its last line that is a JSON object, with a
// whole number "number" and an object "params" of numbers, strings and booleans. Numbers keep
// the text the sampler printed.
func ParseTrial(out []byte) (Trial, error) {
	var line string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "{") {
			line = l
		}
	}
	bad := func(why string) (Trial, error) {
		shown := strings.TrimSpace(string(out))
		if len(shown) > 300 {
			shown = "..." + shown[len(shown)-297:]
		}
		if shown == "" {
			shown = "nothing"
		}
		return Trial{}, fmt.Errorf(`%s: want a line {"number": N, "params": {"name": value, ...}} on stdout, got: %s`, why, shown)
	}
	if line == "" {
		return bad("no JSON object")
	}
	var raw struct {
		Number *json.Number     `json:"number"`
		Params *json.RawMessage `json:"params"`
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return bad("not JSON (" + err.Error() + ")")
	}
	if raw.Number == nil {
		return bad(`no "number"`)
	}
	n, err := strconv.Atoi(raw.Number.String())
	if err != nil || n < 0 {
		return bad(fmt.Sprintf("number %s is not a trial number", raw.Number))
	}
	if raw.Params == nil {
		return bad(`no "params"`)
	}
	params, err := orderedParams(*raw.Params)
	if err != nil {
		return bad(err.Error())
	}
	return Trial{Number: n, Params: params}, nil
}

// orderedParams reads a JSON object of scalars, keeping its order.
func orderedParams(raw json.RawMessage) ([]plan.Param, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New(`"params" is not an object`)
	}
	var out []plan.Param
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := k.(string) // an object's keys are strings
		v, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var text string
		switch v := v.(type) {
		case json.Number:
			text = v.String()
		case string:
			text = v
		case bool:
			text = strconv.FormatBool(v)
		default:
			return nil, fmt.Errorf("param %q: want a number, string or boolean", name)
		}
		out = append(out, plan.Param{Name: name, Value: text})
	}
	return out, nil
}

// limited writes at most n bytes to w and drops the rest, so that a chatty sampler cannot
// fill memory; cut says it did.
type limited struct {
	w   io.Writer
	n   int
	cut bool
}

func (l *limited) Write(p []byte) (int, error) {
	k := min(len(p), l.n)
	l.w.Write(p[:k])
	l.n -= k
	l.cut = l.cut || k < len(p)
	return len(p), nil
}
