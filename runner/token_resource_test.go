package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// tokens is a third resource, added in a test through the run's list alone: it admits a
// trial while one of its count of tokens is free, tells the trial's command which token it
// holds, and counts the attempts that ended as a consumer of the stream.
type tokens struct {
	mu                                                   sync.Mutex
	free                                                 []int
	held                                                 map[*sched.Trial]int
	changed                                              chan struct{}
	most                                                 int // the most tokens held at once
	ended                                                int // TaskEnded events seen
	opened, started, stopped, closed, recorded, endedRun bool
}

func newTokens(n int) *tokens {
	t := &tokens{held: map[*sched.Trial]int{}, changed: make(chan struct{})}
	for i := range n {
		t.free = append(t.free, i)
	}
	return t
}

func (t *tokens) Admit(tr *sched.Trial) (bool, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.free) == 0 {
		return false, "waiting for a token", nil
	}
	t.held[tr], t.free = t.free[0], t.free[1:]
	t.most = max(t.most, len(t.held))
	return true, "", nil
}

func (t *tokens) Release(tr *sched.Trial) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.held[tr]; ok {
		delete(t.held, tr)
		t.free = append(t.free, n)
	}
}

func (t *tokens) Changed() <-chan struct{} { return nil } // only a trial's end frees a token

func (t *tokens) Rooms(tr *sched.Trial, _ *plan.Task) resource.Rooms {
	t.mu.Lock()
	defer t.mu.Unlock()
	return resource.Rooms{Rest: []trial.Room{tokenRoom{n: t.held[tr]}}}
}

func (t *tokens) Consumer() event.Consumer {
	return event.Func(func(ev event.Event, _ func(event.Event)) {
		if ev.Kind == event.TaskEnded {
			t.mu.Lock()
			t.ended++
			t.mu.Unlock()
		}
	})
}

func (t *tokens) Open(func(string)) func() { t.opened = true; return func() { t.closed = true } }
func (t *tokens) Start(context.Context, resource.Run) func() {
	t.started = true
	return func() { t.stopped = true }
}
func (t *tokens) Record(*results.Run) { t.recorded = true }
func (t *tokens) Ended()              { t.endedRun = true }

// tokenRoom tells a command the token its trial holds.
type tokenRoom struct{ n int }

func (tokenRoom) Begin(*event.Event, trial.Attempt)        {}
func (tokenRoom) Started(int)                              {}
func (tokenRoom) Line(string)                              {}
func (tokenRoom) Ended(proc.Outcome)                       {}
func (r tokenRoom) Env(env []string) []string              { return append(env, "TOKEN="+strconv.Itoa(r.n)) }
func (tokenRoom) Says(proc.Outcome, bool) (string, string) { return "", "" }
func (tokenRoom) Failed(trial.Failure) trial.Answer        { return trial.Answer{} }
func (tokenRoom) Detail(*event.Detail)                     {}

// TestTokenResource: a resource added to the run's list, and nothing else, admits trials
// by its count (two tokens: four trials under a limit of four run two at a time), gives
// each command its room (the token, in its environment), reads the stream, and is opened,
// started, stopped, recorded and closed with the run.
func TestTokenResource(t *testing.T) {
	dir := t.TempDir()
	content := `
config: {max-parallel-commands: 4}
tasks:
  - name: sweep
    parallel-tasks:
      - {name: a, cmd: 'test -n "$TOKEN" && sleep 0.3'}
      - {name: b, cmd: 'test -n "$TOKEN" && sleep 0.3'}
      - {name: c, cmd: 'test -n "$TOKEN" && sleep 0.3'}
      - {name: d, cmd: 'test -n "$TOKEN" && sleep 0.3'}
`
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := Options{Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}}
	opts.Output.Stdout = &out
	opts.Record.LogDir = filepath.Join(dir, "logs")
	r, err := newRun(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok := newTokens(2)
	r.launch.res = append(r.launch.res, tok) // the list, and nothing else
	res, err := r.execute()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for name, task := range byName(res) {
		if name != "sweep" && task.Status != results.StatusOK {
			t.Errorf("%s: %s (%s): its command had no token\n%s", name, task.Status, task.Reason, out.String())
		}
	}
	if tok.most != 2 {
		t.Errorf("at most %d tokens held at once, want 2", tok.most)
	}
	if tok.ended != 4 {
		t.Errorf("the consumer saw %d attempts end, want 4", tok.ended)
	}
	if !tok.opened || !tok.started || !tok.stopped || !tok.closed || !tok.recorded || !tok.endedRun {
		t.Errorf("lifecycle: opened %v started %v stopped %v closed %v recorded %v ended %v",
			tok.opened, tok.started, tok.stopped, tok.closed, tok.recorded, tok.endedRun)
	}
	if !strings.Contains(out.String(), "waiting for a token") {
		t.Logf("no trial was said to wait for a token (the status line may not have come)\n%s", out.String())
	}
}
