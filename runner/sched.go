package runner

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// runTasks runs tasks one after another. What a task exports reaches the tasks after it.
// It returns the environment as the last task left it.
func (r *run) runTasks(ctx context.Context, tasks []*Task, env []string) []string {
	for _, t := range tasks {
		if r.isHalted() {
			r.skip(t, r.haltReason())
			continue
		}
		if t.IsBlock() {
			r.runBlock(ctx, t, env)
			continue
		}
		res, ok := r.runSequential(ctx, t, env)
		if ok {
			env = append(env, res.exported...)
		}
	}
	return env
}

// runSequential runs one top-level command. A GPU task waits for room first, and one that
// runs out of GPU memory goes again with a larger need, as a trial would.
func (r *run) runSequential(ctx context.Context, t *Task, env []string) (commandResult, bool) {
	if t.GPU == nil || r.admit == nil {
		return r.runCommand(ctx, t, env, true, nil), true
	}
	for {
		p, ok := r.waitForGPU(ctx, t)
		if !ok {
			return commandResult{}, false
		}
		res := r.runCommand(ctx, t, env, true, p)
		r.admit.release(p)
		if !res.oom {
			return res, true
		}
		r.requeueAfterOOM(t, p, res.peak)
	}
}

func (r *run) haltReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interrupted != 0 {
		return fmt.Sprintf("not started: runall was stopped by %v", r.interrupted)
	}
	return "not started: an earlier task failed (stop-on-failure)"
}

// waitForGPU blocks a sequential GPU task until a device has room for it.
func (r *run) waitForGPU(ctx context.Context, t *Task) (*placement, bool) {
	lastReason := ""
	for {
		if r.isHalted() || ctx.Err() != nil {
			r.skip(t, r.haltReason())
			return nil, false
		}
		p, reason, err := r.admit.place(t)
		if err != nil {
			r.failUnrunnable(t, err.Error())
			return nil, false
		}
		if p != nil {
			return p, true
		}
		if reason != lastReason {
			r.emit(Event{Kind: TaskWaiting, Task: t, Reason: reason})
			lastReason = reason
		}
		select {
		case <-ctx.Done():
		case <-time.After(admitPoll):
		}
	}
}

// requeueAfterOOM raises the need of a task that ran out of GPU memory and says so; the
// caller runs it again.
func (r *run) requeueAfterOOM(t *Task, p *placement, peak uint64) {
	need := r.admit.raiseAfterOOM(t, p, peak)
	r.emit(Event{Kind: TaskWaiting, Task: t, Reason: "requeued after running out of GPU memory; now needs " + formatSize(need)})
}

// admitPoll is how often waiting GPU trials look again at the devices.
const admitPoll = 200 * time.Millisecond

// trialDone is a parallel child's end, sent to its block's loop.
type trialDone struct {
	task *Task
	p    *placement
	oom  bool // ran out of GPU memory and may be requeued
	peak uint64
}

// runBlock runs a parallel block: its children concurrently, at most max-parallel-commands
// at once and, for GPU trials, as the admitter allows. Children start in file order, but a
// smaller trial that fits may overtake a larger one that waits, a bounded number of times.
func (r *run) runBlock(ctx context.Context, b *Task, env []string) {
	limit := max(r.plan.Config.MaxParallel, 1)
	var pending []*Task
	for _, t := range b.Parallel {
		if reason, skip := r.resumeSkip(ctx, t); skip {
			r.skip(t, reason)
			continue
		}
		pending = append(pending, t)
	}
	done := make(chan trialDone)
	running := 0
	overtaken := map[*Task]int{}
	lastReason := map[*Task]string{}
	var wg sync.WaitGroup
	defer wg.Wait()

	for len(pending) > 0 || running > 0 {
		if r.isHalted() {
			for _, t := range pending {
				r.skip(t, r.haltReason())
			}
			pending = nil
		}
		// Admit what fits, in order.
		for i := 0; i < len(pending) && running < limit; {
			t := pending[i]
			var p *placement
			if t.GPU != nil && r.admit != nil {
				var reason string
				var err error
				p, reason, err = r.admit.place(t)
				if err != nil {
					r.failUnrunnable(t, err.Error())
					pending = slices.Delete(pending, i, i+1)
					continue
				}
				if p == nil {
					if reason != lastReason[t] {
						r.emit(Event{Kind: TaskWaiting, Task: t, Reason: reason})
						lastReason[t] = reason
					}
					// The head of the line may be overtaken only so often; then it holds
					// the line until it fits, so that large trials are not starved.
					if i == 0 && overtaken[t] >= limit {
						break
					}
					i++
					continue
				}
			}
			for _, w := range pending[:i] {
				overtaken[w]++
			}
			pending = slices.Delete(pending, i, i+1)
			delete(lastReason, t)
			running++
			wg.Add(1)
			go func() {
				defer wg.Done()
				done <- r.runTrial(ctx, t, env, p)
			}()
		}
		if running == 0 && len(pending) == 0 {
			break
		}
		var poll <-chan time.Time
		if len(pending) > 0 && running < limit {
			poll = time.After(admitPoll)
		}
		select {
		case d := <-done:
			running--
			if d.p != nil {
				r.admit.release(d.p)
			}
			if d.oom {
				r.requeueAfterOOM(d.task, d.p, d.peak)
				pending = slices.Insert(pending, 0, d.task)
			}
		case <-poll:
		}
	}
}

// runTrial runs a parallel child: a command, or its own sequence of steps, on its placement.
func (r *run) runTrial(ctx context.Context, t *Task, env []string, p *placement) trialDone {
	if len(t.Steps) == 0 {
		res := r.runCommand(ctx, t, env, false, p)
		return trialDone{task: t, p: p, oom: res.oom, peak: res.peak}
	}
	allOK := true
	for _, s := range t.Steps {
		if r.isHalted() {
			allOK = false
			r.skip(s, r.haltReason())
			continue
		}
		res := r.runCommand(ctx, s, env, true, p)
		if res.oom {
			// The whole trial goes back to the queue; its finished steps run again.
			return trialDone{task: t, p: p, oom: true, peak: res.peak}
		}
		if !res.ok {
			allOK = false
			for _, rest := range t.Steps[slices.Index(t.Steps, s)+1:] {
				r.skip(rest, "not started: an earlier step of this trial failed")
			}
			break
		}
		env = append(env, res.exported...)
	}
	r.uploadAfter(ctx, t, allOK)
	return trialDone{task: t, p: p}
}

// commandResult is what runCommand tells its caller.
type commandResult struct {
	ok       bool     // succeeded, or failed with ignore-failure
	oom      bool     // failed out of GPU memory, and may be requeued
	peak     uint64   // the most GPU memory it was seen using
	exported []string // variables it exported (sequential tasks)
}

// runCommand runs one command task with its retries and records its result.
func (r *run) runCommand(ctx context.Context, t *Task, env []string, capture bool, p *placement) commandResult {
	res := r.result(t)
	logFile, err := r.openTaskLog(t)
	if err != nil {
		r.failUnrunnable(t, "cannot open its log file: "+err.Error()) // a failure like any other: exit 1, stop-on-failure
		return commandResult{}
	}
	defer logFile.Close()
	extra := r.extraLog(t.LogPath)

	cmdline, dir, err := r.prepare(ctx, t)
	if err != nil {
		r.failUnrunnable(t, err.Error()) // a failed download, md5 or cwd fails the run too
		return commandResult{}
	}
	env = r.taskEnv(t, env, p)
	tails := &tailBuffer{}
	oomSeen := false
	gpuTrial := p != nil

	attempts := 1 + t.Retries
	var out outcome
	for n := 1; n <= attempts; n++ {
		if n > 1 && r.isHalted() {
			break
		}
		r.mu.Lock()
		res.Attempts++
		attemptNo := res.Attempts
		if res.StartedAt.IsZero() {
			res.StartedAt = time.Now()
		}
		res.Status = StatusRunning
		if p != nil {
			res.Devices = p.uuids
			res.GPUMemory = p.need
		}
		r.mu.Unlock()
		fmt.Fprintf(logFile, "== %s attempt %d: %s\n", time.Now().Format(time.RFC3339), attemptNo, r.mask.Replace(cmdline))
		var devices []string
		if p != nil {
			devices = p.uuids
		}
		r.emit(Event{Kind: TaskStarted, Task: t, Attempt: attemptNo, Devices: devices})
		r.met.taskStarted()

		a := &attempt{
			cmd: cmdline, dir: dir, env: env, capture: capture,
			timeout: t.Timeout, procs: r.procs, killWait: r.opts.Grace,
			onLine: func(stream, line string) {
				line = r.mask.Replace(line)
				tails.add(stream, line)
				if gpuTrial && !oomSeen && isOOM(line) {
					oomSeen = true
				}
				logFile.WriteString(line + "\n")
				if r.combined != nil {
					r.combined.WriteString(line + "\n")
				}
				if extra != nil {
					extra.WriteString(line + "\n")
				}
				r.emit(Event{Kind: TaskOutput, Task: t, Attempt: attemptNo, Stream: stream, Line: line})
			},
		}
		out = a.run(ctx)
		r.met.taskEnded()
		if out.ok() {
			break
		}
		reason := failureReason(t, out)
		fmt.Fprintf(logFile, "== attempt %d: %s\n", attemptNo, reason)
		if oomSeen && p != nil && r.admit != nil && !r.isHalted() {
			r.mu.Lock()
			requeue := res.OOMRequeues < r.plan.Config.OOMRetries
			if requeue {
				res.OOMRequeues++
				res.Status = StatusPending
			}
			r.mu.Unlock()
			if requeue {
				r.met.oomRequeued()
				peak := r.admit.peak(p)
				r.emit(Event{Kind: TaskEnded, Task: t, Attempt: attemptNo, Status: StatusFailed,
					ExitCode: out.exitCode, Duration: out.finished.Sub(out.started),
					Reason: "out of GPU memory; requeued"})
				return commandResult{oom: true, peak: peak}
			}
		}
		if n < attempts && !r.isHalted() {
			r.emit(Event{Kind: TaskEnded, Task: t, Attempt: attemptNo, Status: StatusFailed,
				ExitCode: out.exitCode, Duration: out.finished.Sub(out.started),
				Reason: fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, attempts-n, t.Retries)})
		}
	}

	r.mu.Lock()
	res.StdoutTail, res.StderrTail = tails.lines("stdout"), tails.lines("stderr")
	if p != nil && r.admit != nil {
		res.PeakGPUMemory = max(res.PeakGPUMemory, r.admit.peak(p))
	}
	r.mu.Unlock()

	var cr commandResult
	if p != nil && r.admit != nil {
		cr.peak = r.admit.peak(p)
	}
	switch {
	case out.ok():
		r.finish(t, StatusOK, 0, "")
		cr.ok, cr.exported = true, exportedChanges(env, out.exported)
	case t.IgnoreFailure:
		r.finish(t, StatusIgnored, out.exitCode, failureReason(t, out)+" (ignored)")
		cr.ok = true
	default:
		r.finish(t, StatusFailed, out.exitCode, failureReason(t, out))
		r.mu.Lock()
		r.failed = true
		if t.StopOnFailure {
			r.halted = true
		}
		r.mu.Unlock()
	}
	r.uploadAfter(ctx, t, out.ok())
	return cr
}

func failureReason(t *Task, out outcome) string {
	switch {
	case out.err != nil:
		return out.err.Error()
	case out.timedOut:
		return fmt.Sprintf("timeout after %v", t.Timeout)
	case out.exitCode < 0:
		return "killed by a signal"
	}
	return fmt.Sprintf("exit code %d", out.exitCode)
}

// finish records a task's end and tells the output.
func (r *run) finish(t *Task, status Status, exitCode int, reason string) {
	r.mu.Lock()
	res := r.resultLocked(t)
	res.Status, res.ExitCode, res.Reason = status, exitCode, reason
	res.FinishedAt = time.Now()
	if res.StartedAt.IsZero() {
		res.StartedAt = res.FinishedAt
	}
	d := res.Duration()
	attempt := res.Attempts
	r.mu.Unlock()
	r.met.taskFinished(status, d, t.GPU != nil)
	r.emit(Event{Kind: TaskEnded, Task: t, Attempt: attempt, Status: status, ExitCode: exitCode, Duration: d, Reason: reason})
}

// failUnrunnable fails a task that can never run here (it needs more GPU memory than any
// device has, say).
func (r *run) failUnrunnable(t *Task, reason string) {
	if t.IgnoreFailure {
		r.finish(t, StatusIgnored, -1, reason+" (ignored)")
		return
	}
	r.finish(t, StatusFailed, -1, reason)
	r.mu.Lock()
	r.failed = true
	if t.StopOnFailure {
		r.halted = true
	}
	r.mu.Unlock()
}

// skip marks a task (and everything in it) as not run.
func (r *run) skip(t *Task, reason string) {
	if t.IsBlock() || len(t.Steps) > 0 {
		for _, c := range append(slices.Clone(t.Parallel), t.Steps...) {
			r.skip(c, reason)
		}
		return
	}
	r.mu.Lock()
	res := r.resultLocked(t)
	if res.Status != "" && res.Status != StatusPending {
		r.mu.Unlock()
		return
	}
	res.Status, res.Reason, res.ExitCode = StatusSkipped, reason, -1
	r.mu.Unlock()
	r.met.taskFinished(StatusSkipped, 0, t.GPU != nil)
	r.emit(Event{Kind: TaskSkipped, Task: t, Reason: reason})
}

func (r *run) result(t *Task) *TaskResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resultLocked(t)
}

func (r *run) resultLocked(t *Task) *TaskResult {
	res, ok := r.byID[t.ID]
	if !ok {
		res = &TaskResult{ID: t.ID, Name: t.Name, Cmd: r.mask.Replace(t.Cmd), Status: StatusPending, ExitCode: -1}
		r.byID[t.ID] = res
	}
	return res
}

// results gathers every command task's result in plan order.
func (r *run) results() *Results {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Results{
		File: r.plan.File, RunID: r.id, StartedAt: r.start, FinishedAt: time.Now(),
		LogDir: r.logDir, Status: StatusOK,
	}
	if r.opts.Shard.active() {
		res.Shard = r.opts.Shard.String()
	}
	if r.failed || r.interrupted != 0 {
		res.Status = StatusFailed
	}
	walkCommands(r.plan.Tasks, func(t *Task) {
		tr, ok := r.byID[t.ID]
		if !ok {
			tr = &TaskResult{ID: t.ID, Name: t.Name, Cmd: r.mask.Replace(t.Cmd), Status: StatusSkipped, ExitCode: -1}
		}
		tr.LogFile = r.taskLogPath(t)
		if tr.Status == StatusSkipped || tr.Status == StatusPending {
			tr.LogFile = ""
		}
		res.Tasks = append(res.Tasks, *tr)
	})
	if r.admit != nil {
		res.LearnedGPUMemory = r.admit.learnedByName(r.plan)
	}
	return res
}

// walkCommands calls fn for every command task, in plan order.
func walkCommands(tasks []*Task, fn func(*Task)) {
	for _, t := range tasks {
		switch {
		case t.IsBlock():
			walkCommands(t.Parallel, fn)
		case len(t.Steps) > 0:
			walkCommands(t.Steps, fn)
		default:
			fn(t)
		}
	}
}

// taskEnv is the environment a task's command gets: runall's, what earlier tasks exported,
// the task's env: (with $VAR expanded against what came before), and its GPU placement.
func (r *run) taskEnv(t *Task, env []string, p *placement) []string {
	env = slices.Clone(env)
	for _, v := range t.Env {
		val := os.Expand(v.Value, func(name string) string { s, _ := lookupEnv(env, name); return s })
		env = setEnv(env, v.Name, val)
	}
	env = setEnv(env, "RUNALL_TASK_NAME", t.Name)
	env = setEnv(env, "RUNALL_TASK_ID", fmt.Sprint(t.ID))
	if p != nil {
		env = r.admit.trialEnv(env, t, p)
	}
	return env
}

// prepare resolves what a task runs and where: url: downloads (and md5 checks) a script,
// sudo: wraps the command when runall is not root.
func (r *run) prepare(ctx context.Context, t *Task) (cmdline, dir string, err error) {
	cmdline = t.Cmd
	if t.URL != "" {
		script, err := r.fetchScript(ctx, t)
		if err != nil {
			return "", "", err
		}
		switch {
		case cmdline == "":
			cmdline = shellQuote(script)
		case strings.Contains(cmdline, "<exec>"):
			cmdline = strings.ReplaceAll(cmdline, "<exec>", shellQuote(script))
		default:
			cmdline = shellQuote(script) + " " + cmdline
		}
	}
	if t.Sudo && os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return "", "", fmt.Errorf("%s: task %q has sudo: true, but runall is not root and there is no sudo", t.Pos, t.Name)
		}
		cmdline = "sudo -n -E " + shellQuote(shellPath()) + " -c " + shellQuote(cmdline)
	}
	dir = r.plan.Dir
	if t.Cwd != "" {
		dir = r.taskPath(t.Cwd)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("cwd %q: not a directory", dir)
		}
	}
	return cmdline, dir, nil
}

// fetchScript downloads a url: task's script once per run and checks its md5.
func (r *run) fetchScript(ctx context.Context, t *Task) (string, error) {
	r.scriptMu.Lock()
	defer r.scriptMu.Unlock()
	sum := md5.Sum([]byte(t.URL))
	path := filepath.Join(r.logDir, "scripts", hex.EncodeToString(sum[:8])+"-"+filepath.Base(t.URL))
	if _, err := os.Stat(path); err != nil {
		if err := downloadFile(ctx, t.URL, path); err != nil {
			return "", fmt.Errorf("url %s: %w", t.URL, err)
		}
	}
	if t.MD5 != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		got := md5.Sum(b)
		if !strings.EqualFold(hex.EncodeToString(got[:]), t.MD5) {
			return "", fmt.Errorf("url %s: md5 is %x, the task file expects %s", t.URL, got, t.MD5)
		}
	}
	return path, nil
}

// scriptClient fetches url: scripts; a stalled server fails the task instead of hanging it.
var scriptClient = &http.Client{Timeout: 5 * time.Minute}

func downloadFile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := scriptClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download: %s", resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, resp.Body); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+=:,@", c))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// oomPatterns are what frameworks print when the GPU runs out of memory.
var oomPatterns = regexp.MustCompile(`CUDA out of memory|OutOfMemoryError|OOM when allocating|` +
	`ran out of memory trying to allocate|RESOURCE_EXHAUSTED: Out of memory|CUDA_ERROR_OUT_OF_MEMORY|` +
	`CUBLAS_STATUS_ALLOC_FAILED|CUDA error: out of memory`)

func isOOM(line string) bool { return oomPatterns.MatchString(line) }

// tailBuffer keeps the last lines of each stream for the failure report.
type tailBuffer struct {
	mu     sync.Mutex
	stdout []string
	stderr []string
}

const tailKeep = 20

func (b *tailBuffer) add(stream, line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := &b.stdout
	if stream == "stderr" {
		buf = &b.stderr
	}
	if len(*buf) >= tailKeep {
		*buf = append((*buf)[:0], (*buf)[1:]...)
	}
	*buf = append(*buf, line)
}

func (b *tailBuffer) lines(stream string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if stream == "stderr" {
		return slices.Clone(b.stderr)
	}
	return slices.Clone(b.stdout)
}
