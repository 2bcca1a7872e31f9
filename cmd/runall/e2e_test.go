// End-to-end tests: they build the runall binary once and run task files from testdata/,
// each in a scratch working directory of its own, and check what a user would see: exit
// codes, output, the --results file, log files, and which processes are left.
//
// They are an external test package so that their helpers cannot collide with package
// main's names.
package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/internal/miniotest"
)

var (
	runallBin   string // the binary TestMain built
	testdataDir string // absolute path of testdata/
)

// cmdTimeout bounds every runall command, so that a hang fails its test. Most take a few
// seconds; the margin is for a loaded 2-core machine, where twenty -race runalls sharing one
// sweep (TestClaimsRace) took over a minute. Tests never assert durations.
const cmdTimeout = 3 * time.Minute

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runall-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	runallBin = filepath.Join(dir, "runall")
	args := []string{"build", "-o", runallBin}
	if raceEnabled {
		args = append(args, "-race") // make test runs with -race: the binary's races fail its runs
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building runall for the end-to-end tests: %v\n", err)
		return 1
	}
	if testdataDir, err = filepath.Abs("testdata"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return miniotest.Main(m) // m.Run, then stops the MinIO that the S3 tests share
}

// e2e is one test's scratch working directory, where runall runs.
type e2e struct {
	t   *testing.T
	dir string
	env []string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	return &e2e{t: t, dir: t.TempDir(), env: hermeticEnv(t.TempDir())}
}

// hermeticEnv is the test's environment without what would change how runall behaves
// (sharding, fake GPUs, proxies, the terminal), with simulated GPU state kept in gpuState.
func hermeticEnv(gpuState string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "RUNALL_SHARD", "RUNALL_SHARDS", "RUNALL_CLAIMS", "JOB_COMPLETION_INDEX", "RUNALL_FAKE_GPUS",
			"RUNALL_FAKE_GPU_STATE", "NO_COLOR", "TERM", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
			"ALL_PROXY", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "RUNALL_FAKE_GPU_STATE="+gpuState, "TERM=dumb")
}

// path is a path inside the working directory.
func (e *e2e) path(elem ...string) string { return filepath.Join(append([]string{e.dir}, elem...)...) }

func (e *e2e) exists(name string) bool {
	_, err := os.Stat(e.path(name))
	return err == nil
}

func (e *e2e) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func testdata(name string) string { return filepath.Join(testdataDir, name) }

// result is how a runall command ended.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("runall %s: exit %d\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// wantCode fails the test unless runall exited with code.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\n%v", r.code, code, r)
	}
}

// run runs runall with args in the working directory and waits for it.
func (e *e2e) run(args ...string) result {
	e.t.Helper()
	p := e.start(args...)
	return p.wait()
}

// runFile runs testdata/FILE with logs and results in the working directory; rest (flags
// or task arguments) follows the file name.
func (e *e2e) runFile(file string, rest ...string) result {
	e.t.Helper()
	return e.run(append([]string{"--log-dir", "logs", "--results", "results.json", testdata(file)}, rest...)...)
}

// proc is a runall process that a test watches while it runs.
type proc struct {
	t      *testing.T
	args   []string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdout *syncBuffer
	stderr *syncBuffer
}

// start starts runall with args in the working directory.
func (e *e2e) start(args ...string) *proc {
	e.t.Helper()
	return e.startCmd(runallBin, args, args...)
}

func (e *e2e) startCmd(name string, shownArgs []string, args ...string) *proc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	p := &proc{t: e.t, args: shownArgs, cmd: cmd, cancel: cancel, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	// A task's leftover process that holds our pipes must not hang the test: that is
	// checked for separately.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return p
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("send %v to runall: %v", sig, err)
	}
}

// waitOutput waits until runall's stdout contains s.
func (p *proc) waitOutput(s string) {
	p.t.Helper()
	eventually.True(p.t, fmt.Sprintf("runall's output to contain %q\n--- stdout so far:\n%s", s, p.stdout), func() bool {
		return strings.Contains(p.stdout.String(), s)
	})
}

// wait waits for runall to exit.
func (p *proc) wait() result {
	p.t.Helper()
	err := p.cmd.Wait()
	defer p.cancel()
	r := result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String()}
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		p.t.Errorf("the race detector found a data race in runall\n%v", r)
	}
	var exitErr *exec.ExitError
	switch {
	case p.cmd.ProcessState != nil && p.cmd.ProcessState.ExitCode() >= 0 && (err == nil || errors.As(err, &exitErr)):
		r.code = p.cmd.ProcessState.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		p.t.Fatalf("runall exited, but something it started kept its stdout open\n%v", r)
	default:
		p.t.Fatalf("runall did not exit by itself within %v (%v)\n%v", cmdTimeout, err, r)
	}
	return r
}

// syncBuffer is a bytes.Buffer that a test may read while exec writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// resultsFile is the --results JSON, with times kept as the strings runall wrote.
type resultsFile struct {
	Schema     int          `json:"schema"`
	File       string       `json:"file"`
	RunID      string       `json:"run_id"`
	Status     string       `json:"status"`
	StartedAt  string       `json:"started_at"`
	FinishedAt string       `json:"finished_at"`
	LogDir     string       `json:"log_dir"`
	Tasks      []taskResult `json:"tasks"`

	LearnedHostMemory map[string]uint64 `json:"learned_host_memory"`
}

type taskResult struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Cmd        string `json:"cmd"`
	Status     string `json:"status"`
	ExitCode   *int   `json:"exit_code"` // nil: none in the file (skipped, never started)
	Signal     string `json:"signal"`
	Attempts   int    `json:"attempts"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
	Reason     string `json:"reason"`
	LogFile    string `json:"log_file"`

	OOMRequeues int `json:"oom_requeues"`
}

// results reads the working directory's results.json.
func (e *e2e) results() resultsFile {
	e.t.Helper()
	return readResults(e.t, e.path("results.json"))
}

func readResults(t *testing.T, path string) resultsFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("results file: %v", err)
	}
	var r resultsFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("results file: %v\n%s", err, b)
	}
	return r
}

// task returns the result of the task called name.
func (r resultsFile) task(t *testing.T, name string) taskResult {
	t.Helper()
	for _, tr := range r.Tasks {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no task %q in the results; have %q", name, r.names())
	return taskResult{}
}

func (r resultsFile) names() []string {
	var names []string
	for _, tr := range r.Tasks {
		names = append(names, tr.Name)
	}
	return names
}

// statuses maps each task's name to its status.
func (r resultsFile) statuses() map[string]string {
	m := map[string]string{}
	for _, tr := range r.Tasks {
		m[tr.Name] = tr.Status
	}
	return m
}

func (tr taskResult) want(t *testing.T, status string, exitCode, attempts int) {
	t.Helper()
	got := noExitCode
	if tr.ExitCode != nil {
		got = *tr.ExitCode
	}
	if tr.Status != status || got != exitCode || tr.Attempts != attempts {
		t.Errorf("task %q: status %s, exit code %d, %d attempts; want %s, %d, %d (reason %q; %d: no exit_code)",
			tr.Name, tr.Status, got, tr.Attempts, status, exitCode, attempts, tr.Reason, noExitCode)
	}
}

// noExitCode stands for a task with no exit_code in the results: a skipped one has none.
const noExitCode = math.MinInt32

// lines splits output into lines, without a trailing empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// hasLine reports whether out has exactly this line.
func hasLine(out, line string) bool { return slices.Contains(lines(out), line) }

func wantLines(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, l := range want {
		if !hasLine(r.stdout, l) {
			t.Errorf("stdout lacks the line %q", l)
		}
	}
	if t.Failed() {
		t.Logf("%v", r)
	}
}

// pidsIn reads the process ids a task wrote to a file, separated by blanks.
func pidsIn(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			t.Fatalf("%s: not a pid list: %q", path, b)
		}
		pids = append(pids, pid)
	}
	return pids
}

// killOnCleanup makes sure a test that fails leaves no task processes behind.
func killOnCleanup(t *testing.T, pids []int) {
	t.Cleanup(func() {
		for _, pid := range pids {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// alive reports whether pid is a process that has not exited: kill(pid, 0) finds it and it
// is not a zombie (a zombie has exited; only its parent has yet to reap it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// wantGone fails unless every pid has exited. A process that was just SIGKILLed may take a
// moment to die, so this waits a little; a survivor sleeping 1000s will not go away.
func wantGone(t *testing.T, what string, pids []int) {
	t.Helper()
	var left []int
	eventually.Until(5*time.Second, func() bool {
		left = left[:0]
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	})
	for _, pid := range left {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Errorf("%s: process %d (%s) survived runall", what, pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
}

// rfc3339Nano is a timestamp with a fraction of a second, as --results writes them.
var rfc3339Nano = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,9}(Z|[+-]\d\d:\d\d)$`)

func wantTime(t *testing.T, what, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !rfc3339Nano.MatchString(s) {
		t.Errorf("%s = %q: want RFC 3339 with nanoseconds", what, s)
	}
	return ts
}

func TestSequentialTasksRunInFileOrder(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("order.yml")
	r.wantCode(t, 0)
	if got := e.read("order.txt"); got != "one\ntwo\nthree\n" {
		t.Errorf("order.txt = %q, want one, two, three", got)
	}
	wantLines(t, r, "[two] made by one")
	res := e.results()
	if got, want := res.names(), []string{"one", "two", "three"}; !slices.Equal(got, want) {
		t.Errorf("results list %q, want %q", got, want)
	}
	for _, tr := range res.Tasks {
		tr.want(t, "ok", 0, 1)
	}
}

func TestParallelCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		limit int
	}{
		{"max-parallel-commands", nil, 2},
		{"--max-parallel overrides it", []string{"--max-parallel", "3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			r := e.runFile("cap.yml", tc.flags...)
			r.wantCode(t, 0)
			most := 0
			for i := 1; i <= 8; i++ {
				counts := lines(e.read(filepath.Join("counts", strconv.Itoa(i))))
				if len(counts) != 2 {
					t.Fatalf("counts/%d = %q: want two counts", i, counts)
				}
				for _, c := range counts {
					n, err := strconv.Atoi(strings.TrimSpace(c))
					if err != nil {
						t.Fatal(err)
					}
					most = max(most, n)
				}
			}
			if most != tc.limit {
				t.Errorf("at most %d children ran at once, want exactly %d (never more, and the cap reached)", most, tc.limit)
			}
		})
	}
}

func TestStopOnFailure(t *testing.T) {
	t.Parallel()
	t.Run("default: nothing new starts, running tasks finish", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("stop.yml")
		r.wantCode(t, 1)
		res := e.results()
		res.task(t, "breaks").want(t, "failed", 3, 1)
		res.task(t, "slow").want(t, "ok", 0, 1)
		for _, name := range []string{"queued 1", "queued 2", "later"} {
			res.task(t, name).want(t, "skipped", noExitCode, 0)
		}
		if !e.exists("slow.done") {
			t.Error("the task already running when another failed did not finish")
		}
		for _, f := range []string{"queued1.done", "queued2.done", "later.done"} {
			if e.exists(f) {
				t.Errorf("%s exists: a task started after the failure", f)
			}
		}
		if res.Status != "failed" {
			t.Errorf("run status %q, want failed", res.Status)
		}
	})
	t.Run("a task that cannot start", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("badcwd.yml")
		r.wantCode(t, 1)
		res := e.results()
		if tr := res.task(t, "nowhere"); tr.Status != "failed" || !strings.Contains(tr.Reason, "no-such-directory") {
			t.Errorf("nowhere: %s (%s); want failed, saying why", tr.Status, tr.Reason)
		}
		res.task(t, "later").want(t, "skipped", noExitCode, 0)
		if e.exists("later.done") {
			t.Error("the task after the failure ran")
		}
	})
	t.Run("stop-on-failure: false", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("continue.yml")
		r.wantCode(t, 1)
		res := e.results()
		res.task(t, "breaks").want(t, "failed", 3, 1)
		res.task(t, "continues").want(t, "ok", 0, 1)
		if !e.exists("continued") {
			t.Error("the task after the failure did not run")
		}
	})
	t.Run("ignore-failure", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("ignore.yml")
		r.wantCode(t, 0)
		res := e.results()
		res.task(t, "tolerated").want(t, "ignored", 3, 1)
		res.task(t, "next").want(t, "ok", 0, 1)
		if res.Status != "ok" {
			t.Errorf("run status %q, want ok", res.Status)
		}
		if !regexp.MustCompile(`(?m)^\[tolerated\] failed with exit code 3 in \S+ \(ignored\)`).MatchString(r.stdout) {
			t.Errorf("the ignored failure is not shown as one\n%v", r)
		}
	})
}

func TestEnvironmentPassing(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("env.yml", testdataDir)
	r.wantCode(t, 0)
	wantLines(t, r,
		"[sequential] seq FOO=bar SOURCED=fromscript",
		"[own env] own GREETING=hello BOTH=hello-bar",
		"[child a] child a FOO=bar SOURCED=fromscript BLOCKVAR=fromblock",
		"[child b] child b FOO=bar BLOCKVAR=own",
		"[after] after GREETING=unset", // env: is the task's own, not exported to the next
	)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("timeout.yml")
	r.wantCode(t, 1)
	pids := pidsIn(t, e.path("pids"))
	killOnCleanup(t, pids)
	wantGone(t, "timed-out task", pids)
	res := e.results()
	slow := res.task(t, "slow")
	if slow.Status != "failed" || !strings.Contains(slow.Reason, "timeout") {
		t.Errorf("slow: status %s, reason %q; want failed with a reason that says timeout", slow.Status, slow.Reason)
	}
	res.task(t, "after").want(t, "skipped", noExitCode, 0)
	if e.exists("after.done") {
		t.Error("the task after the timeout ran")
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("retries.yml")
	r.wantCode(t, 1)
	res := e.results()
	res.task(t, "flaky").want(t, "ok", 0, 2)
	res.task(t, "hopeless").want(t, "failed", 4, 2)
	wantLines(t, r, "[flaky] attempt 1", "[flaky] attempt 2")
	if n := strings.Count(r.stdout, "[hopeless] nope\n"); n != 2 {
		t.Errorf("hopeless ran %d times, want 2\n%v", n, r)
	}
}

func TestMatrixForEachAndArgs(t *testing.T) {
	t.Parallel()
	t.Run("matrix and for-each", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("matrix.yml")
		r.wantCode(t, 0)
		want := [][2]string{
			{"lr=0.1 bs=64", "echo train lr=0.1 bs=64"},
			{"lr=0.1 bs=128", "echo train lr=0.1 bs=128"},
			{"lr=0.01 bs=64", "echo train lr=0.01 bs=64"},
			{"lr=0.01 bs=128", "echo train lr=0.01 bs=128"},
			{"train [model=small lr=0.1]", "echo model=small lr=0.1"},
			{"train [model=small lr=0.01]", "echo model=small lr=0.01"},
			{"train [model=large lr=0.1]", "echo model=large lr=0.1"},
			{"train [model=large lr=0.01]", "echo model=large lr=0.01"},
			{"clone app1", "echo cloning app1"},
			{"clone app2", "echo cloning app2"},
		}
		var got [][2]string
		for _, tr := range e.results().Tasks {
			got = append(got, [2]string{tr.Name, tr.Cmd})
			if tr.Status != "ok" {
				t.Errorf("%s: %s", tr.Name, tr.Status)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("tasks (name, cmd):\n got %q\nwant %q", got, want)
		}
		wantLines(t, r, "[lr=0.01 bs=128] train lr=0.01 bs=128", "[train [model=large lr=0.1]] model=large lr=0.1", "[clone app2] cloning app2")
	})
	t.Run("$1 and $* from the command line", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.runFile("args.yml", "alpha", "beta gamma")
		r.wantCode(t, 0)
		wantLines(t, r, "[args alpha] first=alpha all=alpha beta gamma")
		tr := e.results().task(t, "args alpha")
		if want := `echo "first=alpha all=alpha beta gamma"`; tr.Cmd != want {
			t.Errorf("cmd = %q, want %q", tr.Cmd, want)
		}
	})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	t.Run("valid file", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.run("check", testdata("valid.yml"))
		r.wantCode(t, 0)
		for _, name := range []string{"prepare data", "sweep", "trial a", "trial b"} {
			if !strings.Contains(r.stdout, name) {
				t.Errorf("the plan does not mention %q\n%v", name, r)
			}
		}
	})
	file := testdata("misspelt.yml")
	wantMsg := file + `:5:5: unknown key "cmdd" (did you mean "cmd"?)`
	t.Run("misspelt key", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.run("check", file)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, wantMsg) {
			t.Errorf("stderr lacks %q\n%v", wantMsg, r)
		}
	})
	t.Run("a file with errors runs nothing", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		r := e.run("--log-dir", "logs", file)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, wantMsg) {
			t.Errorf("stderr lacks %q\n%v", wantMsg, r)
		}
		if e.exists("created") {
			t.Error("the task before the mistake ran")
		}
	})
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"all ok", []string{testdata("ok.yml")}, 0},
		{"run subcommand", []string{"run", testdata("ok.yml")}, 0},
		{"a task failed", []string{testdata("fail.yml")}, 1},
		{"unknown flag", []string{"--no-such-flag", testdata("ok.yml")}, 2},
		{"bad flag value", []string{"--output", "fancy", testdata("ok.yml")}, 2},
		{"no file", nil, 2},
		{"missing file", []string{"no-such-file.yml"}, 2},
		{"check: missing file", []string{"check", "no-such-file.yml"}, 2},
		{"invalid file", []string{testdata("misspelt.yml")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			r := e.run(tc.args...) // logs go to .runall/ in the scratch directory
			r.wantCode(t, tc.code)
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	cases := [][]string{{"--version"}, {"version"}, {"--help"}, {"-h"}, {"help"}, {"tasks.yml", "-h"}}
	for _, cmd := range []string{"run", "demo", "check", "gpus", "resources", "sync", "report", "fake-alloc", "fake-train"} {
		cases = append(cases, []string{cmd, "--help"})
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := newE2E(t).run(args...)
			r.wantCode(t, 0)
			if strings.Contains(args[len(args)-1], "version") {
				if !regexp.MustCompile(`^runall \S+\n$`).MatchString(r.stdout) {
					t.Errorf("version output %q, want \"runall VERSION\"", r.stdout)
				}
			} else if !strings.Contains(r.stdout, "Usage") || r.stderr != "" {
				t.Errorf("want the usage on stdout (to page or grep it) and nothing on stderr\n%v", r)
			}
		})
	}
}

// TestRenamedBinaryIsRunallToTasks: a binary under another name (as a release names it) is
// runall to its tasks, which call `runall fake-alloc` (the demo's do) with no runall on PATH;
// the link that makes it so is gone when the run ends.
func TestRenamedBinaryIsRunallToTasks(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	bin := e.path("bin", "runall-linux-amd64")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(runallBin, bin); err != nil {
		t.Fatal(err)
	}
	tmp := e.path("tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "PATH=/usr/bin:/bin", "TMPDIR="+tmp)
	e.writeFile("tasks.yml", "tasks:\n  - name: self\n    cmd: runall --version\n")
	args := []string{"--log-dir", "logs", "tasks.yml"}
	r := e.startCmd(bin, args, args...).wait()
	r.wantCode(t, 0)
	if !regexp.MustCompile(`\[self\] runall \S+\n`).MatchString(r.stdout) {
		t.Errorf("the task did not find runall\n%v", r)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// A flag that does not exist is a usage error that says where the flags are listed.
func TestUnknownFlag(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"run", "check", "gpus", "resources", "sync", "report", "fake-alloc", "fake-train"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := newE2E(t).run(cmd, "--no-such-flag")
			r.wantCode(t, 2)
			if want := "Run 'runall " + cmd + " --help' for the flags."; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q\n%v", want, r)
			}
		})
	}
}

// interval is when a task ran.
type interval struct{ start, end time.Time }

// mostAtOnce is the largest number of intervals that overlap at one instant. An end and a
// start at the same instant do not overlap: ends count first.
func mostAtOnce(runs []interval) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, r := range runs {
		if r.start.IsZero() || r.end.IsZero() {
			continue
		}
		edges = append(edges, edge{r.start, +1}, edge{r.end, -1})
	}
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.delta - y.delta
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// writeFile writes a file in the working directory.
func (e *e2e) writeFile(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(e.path(name), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// wantRecord fails unless the run left its results and its report.
func (e *e2e) wantRecord(r result) resultsFile {
	e.t.Helper()
	if !e.exists("results.json") {
		e.t.Fatalf("no results.json\n%v", r)
	}
	reports, _ := filepath.Glob(e.path("logs", "2*", "report.html")) // not logs/latest/
	if len(reports) != 1 {
		e.t.Errorf("%d report.html files in the log directory, want 1\n%v", len(reports), r)
	}
	return e.results()
}
