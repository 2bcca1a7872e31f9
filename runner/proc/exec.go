// Package proc runs task commands: each in its own process group, output streamed line by
// line, stopped with a grace period, and nothing left behind when runall ends. It knows
// nothing of task files, GPUs or outputs.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Shell is bash where there is one, else sh: bashful's commands are bash.
func Shell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// envCaptureSuffix runs after a sequential task's command so that what it exported reaches
// the tasks after it (bashful does the same). It is on its own line so that a trailing
// comment in cmd cannot swallow it, and it keeps the command's exit status.
const envCaptureSuffix = "\n__runall_rc=$?; env -0 >\"$RUNALL_ENV_OUT\" 2>/dev/null; exit $__runall_rc\n"

// Attempt is one run of one command.
type Attempt struct {
	Cmd      string   // the command line after url/<exec> and sudo handling
	Dir      string   // working directory
	Env      []string // complete environment
	Capture  bool     // capture exported environment (sequential tasks)
	Timeout  time.Duration
	OnLine   func(stream, line string) // called from reader goroutines, serially per Attempt
	Procs    *Table
	KillWait time.Duration  // between SIGTERM and SIGKILL on timeout
	OnStart  func(pgid int) // called once the shell runs, with its process group id; may be nil
	Mask     Masker         // hides secrets across the split of a line too long to hold; may be nil
}

// Masker hides secrets in output. A line longer than maxLine is passed on in pieces; each
// piece is masked with the start of the next, so that a secret across the split is hidden
// whole rather than printed in two halves.
type Masker interface {
	Replace(s string) string
	Longest() int // the length in bytes of the longest secret
}

// Outcome is how an Attempt ended.
type Outcome struct {
	ExitCode int            // -1 when killed by a signal or never started
	Signal   syscall.Signal // the signal that killed the shell; 0 when it exited
	Err      error          // the process could not be started
	TimedOut bool           // killed by timeout:
	Exported []string       // NAME=value pairs of the environment at its end (capture only)
	Started  time.Time
	Finished time.Time
}

// OK reports whether the command ran and exited 0 in time.
func (o Outcome) OK() bool { return o.Err == nil && !o.TimedOut && o.ExitCode == 0 }

// Run starts the process, streams its output and waits for it. ctx cancellation does not
// kill it: stopping is the Table's job, so that every running task gets the same grace.
func (a *Attempt) Run(ctx context.Context) Outcome {
	var out Outcome
	c, envFile := a.command()
	if envFile != "" {
		defer os.Remove(envFile)
	}
	// Our own pipes rather than exec's copying goroutines: Wait then returns when the shell
	// exits even if a background grandchild keeps the pipe open.
	p, err := newPipes(c)
	if err != nil {
		out.Err, out.ExitCode = err, -1
		return out
	}
	out.Started = time.Now()
	if err := a.start(c); err != nil {
		p.closeRead()
		out.Err, out.ExitCode, out.Finished = fmt.Errorf("start %s: %w", Shell(), err), -1, time.Now()
		return out
	}
	pgid := c.Process.Pid
	defer a.Procs.remove(pgid)
	if a.OnStart != nil {
		a.OnStart(pgid)
	}
	readers := p.read(a.Mask, a.OnLine)
	waitErr, timedOut := a.wait(c, pgid)
	out.Finished = time.Now()
	p.drain(readers, drainQuiet, drainMost)

	out.TimedOut = timedOut
	out.ExitCode, out.Signal = exitStatus(waitErr, c.ProcessState)
	if envFile != "" && out.ExitCode == 0 {
		out.Exported = readEnvFile(envFile)
	}
	return out
}

// command is the shell running a.Cmd; with Capture, also the file it leaves its
// environment in ("" when it could not be made: then nothing is captured).
func (a *Attempt) command() (c *exec.Cmd, envFile string) {
	script := a.Cmd
	if a.Capture {
		if f, err := os.CreateTemp("", "runall-env-*"); err == nil {
			envFile = f.Name()
			f.Close()
			script += envCaptureSuffix
		}
	}
	c = exec.Command(Shell(), "-c", script)
	c.Dir = a.Dir
	c.Env = a.Env
	if envFile != "" {
		c.Env = append(c.Env[:len(c.Env):len(c.Env)], "RUNALL_ENV_OUT="+envFile)
	}
	// Its own process group, so that signals reach everything it starts; and killed with
	// runall should runall itself be killed outright.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return c, envFile
}

// start starts c and registers its process group under the table's lock, so that the
// zombie reaper never takes this child from exec's Wait, however quickly it exits.
func (a *Attempt) start(c *exec.Cmd) error {
	a.Procs.mu.Lock()
	err := c.Start()
	if err == nil {
		raiseOOMScore(c.Process.Pid, a.Procs.oomScoreAdj)
		a.Procs.addLocked(c.Process.Pid)
	}
	a.Procs.mu.Unlock()
	c.Stdout.(*os.File).Close() // the child has its copies
	c.Stderr.(*os.File).Close()
	return err
}

// wait waits for the shell, stopping its group when the timeout passes first.
func (a *Attempt) wait(c *exec.Cmd, pgid int) (err error, timedOut bool) {
	if a.Timeout <= 0 {
		return c.Wait(), false
	}
	fired := make(chan struct{})
	timer := time.AfterFunc(a.Timeout, func() {
		close(fired)
		terminateGroup(pgid, a.KillWait)
	})
	err = c.Wait()
	timer.Stop()
	select {
	case <-fired:
		return err, true
	default:
		return err, false
	}
}

// Once the shell is gone, its pipes are read until they end, or until no line has come for
// drainQuiet (a background process holds them), or for drainMost at most (one that never
// stops writing). A slow consumer of the lines keeps them coming, so its lines are not lost.
const (
	drainQuiet = 2 * time.Second
	drainMost  = 30 * time.Second
)

// pipes are a command's stdout and stderr, read line by line.
type pipes struct {
	stdout, stderr *os.File
	lastLine       atomic.Int64 // unix nanoseconds of the last line handed on
}

func newPipes(c *exec.Cmd) (*pipes, error) {
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		stdoutR.Close()
		stdoutW.Close()
		return nil, err
	}
	c.Stdin = nil
	c.Stdout, c.Stderr = stdoutW, stderrW
	return &pipes{stdout: stdoutR, stderr: stderrR}, nil
}

// read calls onLine for every line of either stream, one line at a time, so that the log
// file and the events keep each stream's order. The group is done when both streams end.
func (p *pipes) read(mask Masker, onLine func(stream, line string)) *sync.WaitGroup {
	var mu sync.Mutex
	emit := func(stream, line string) {
		mu.Lock()
		onLine(stream, line)
		p.lastLine.Store(time.Now().UnixNano())
		mu.Unlock()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); readLines(p.stdout, mask, func(l string) { emit("stdout", l) }) }()
	go func() { defer readers.Done(); readLines(p.stderr, mask, func(l string) { emit("stderr", l) }) }()
	return &readers
}

// drain reads the pipes until they end once the shell is gone, then stops reading
// whatever background process still holds them: after quiet without a line, or at most.
func (p *pipes) drain(readers *sync.WaitGroup, quiet, most time.Duration) {
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	deadline := time.Now().Add(most)
	tick := time.NewTicker(quiet / 8)
	defer tick.Stop()
	for {
		select {
		case <-drained:
			p.closeRead()
			return
		case now := <-tick.C:
			since := now.Sub(time.Unix(0, max(p.lastLine.Load(), deadline.Add(-most).UnixNano())))
			if since >= quiet || now.After(deadline) {
				p.closeRead()
				<-drained
				return
			}
		}
	}
}

func (p *pipes) closeRead() {
	p.stdout.Close()
	p.stderr.Close()
}

// exitStatus is the shell's exit code, or -1 and the signal that killed it.
func exitStatus(err error, ps *os.ProcessState) (int, syscall.Signal) {
	if ps == nil {
		return -1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		return -1, 0
	}
	return ps.ExitCode(), 0
}

// maxLine caps one output line; longer lines are split rather than held in memory.
const maxLine = 64 << 10

// readLines calls fn for every line of r, without its newline. A carriage return also ends
// a line, so that progress bars drawn with \r show up as lines in logs. A line longer than
// maxLine is split; with mask, each piece is masked and its last Longest()-1 bytes go
// with the next piece instead, so no secret is cut in two.
func readLines(r io.Reader, mask Masker, fn func(string)) {
	br := bufio.NewReaderSize(r, maxLine)
	var partial []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			full := chunk[len(chunk)-1] == '\n'
			if full {
				chunk = chunk[:len(chunk)-1]
			}
			if len(partial) > 0 || !full {
				partial = append(partial, chunk...)
				switch {
				case full:
					emitCR(partial, fn)
					partial = partial[:0]
				case len(partial) >= maxLine:
					partial = emitSplit(partial, mask, fn)
				}
			} else {
				emitCR(chunk, fn)
			}
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if len(partial) > 0 {
				emitCR(partial, fn)
			}
			return
		}
	}
}

// emitSplit passes on the piece of a long line held in partial and returns what is kept
// for the next piece: nothing without a mask; else the masked piece's tail that may hold
// the start of a secret.
func emitSplit(partial []byte, mask Masker, fn func(string)) []byte {
	keep := 0
	if mask != nil {
		keep = mask.Longest() - 1
	}
	if keep <= 0 || keep >= len(partial)/2 {
		emitCR(partial, fn)
		return partial[:0]
	}
	masked := mask.Replace(string(partial))
	emitCR([]byte(masked[:len(masked)-keep]), fn)
	return append(partial[:0], masked[len(masked)-keep:]...)
}

func emitCR(line []byte, fn func(string)) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if bytes.IndexByte(line, '\r') < 0 {
		fn(string(line))
		return
	}
	for _, part := range bytes.Split(line, []byte{'\r'}) {
		if len(part) > 0 {
			fn(string(part))
		}
	}
}

// readEnvFile parses `env -0` output.
func readEnvFile(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	var vars []string
	for _, kv := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		if i := strings.IndexByte(kv, '='); i > 0 {
			vars = append(vars, kv)
		}
	}
	return vars
}

// shellVars are set by the shell itself; a task "exporting" them means nothing.
var shellVars = map[string]bool{
	"_": true, "SHLVL": true, "PWD": true, "OLDPWD": true, "RUNALL_ENV_OUT": true, "__runall_rc": true,
}

// ExportedChanges returns the variables in after that are new or changed relative to before.
func ExportedChanges(before, after []string) []string {
	old := make(map[string]string, len(before))
	for _, kv := range before {
		k, v, _ := strings.Cut(kv, "=")
		old[k] = v
	}
	var changed []string
	for _, kv := range after {
		k, v, _ := strings.Cut(kv, "=")
		if shellVars[k] || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		if ov, ok := old[k]; !ok || ov != v {
			changed = append(changed, kv)
		}
	}
	return changed
}

// Table tracks the process groups of running tasks so that a signal reaches them all.
type Table struct {
	mu          sync.Mutex
	groups      map[int]bool
	closed      bool // no new process may start: they are killed on arrival
	oomScoreAdj int  // what every task's shell starts with: TaskOOMScoreAdj
}

// NewTable is an empty table; the tasks started through it start with TaskOOMScoreAdj.
func NewTable() *Table { return &Table{groups: map[int]bool{}, oomScoreAdj: TaskOOMScoreAdj()} }

// addLocked registers a task's process group; the caller holds p.mu. A group that starts
// after the run began stopping is told to stop at once.
func (p *Table) addLocked(pgid int) {
	p.groups[pgid] = true
	if p.closed {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
}

func (p *Table) remove(pgid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.groups, pgid)
}

// Signal sends sig to every running group. With closed set, groups that start later get
// SIGTERM as they arrive.
func (p *Table) Signal(sig syscall.Signal, closed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = p.closed || closed
	for pgid := range p.groups {
		_ = syscall.Kill(-pgid, sig)
	}
}

// Terminate stops one running group: SIGTERM, then SIGKILL after wait if it is still
// running. A group that already ended is left alone (its id may have been reused).
func (p *Table) Terminate(pgid int, wait time.Duration) {
	signal := func(sig syscall.Signal) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.groups[pgid] {
			_ = syscall.Kill(-pgid, sig)
		}
	}
	signal(syscall.SIGTERM)
	time.AfterFunc(wait, func() { signal(syscall.SIGKILL) })
}

// terminateGroup sends SIGTERM to a process group and SIGKILL after wait if it lives on.
func terminateGroup(pgid int, wait time.Duration) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	time.AfterFunc(wait, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
}
