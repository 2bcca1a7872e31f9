package main_test

// End-to-end tests of --claims: several runall processes share one queue of trials through
// the package's MinIO.

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/miniotest"
)

// claimsE2E is a working directory whose runalls share the claims prefix $CLAIMS.
type claimsE2E struct {
	*s3E2E
	prefix string // key prefix in the bucket
}

func newClaimsE2E(t *testing.T) *claimsE2E {
	s := newS3E2E(t)
	c := &claimsE2E{s3E2E: s, prefix: "sweep/"}
	s.env = append(s.env, "SHARED="+s.dir, "RUNALL_CLAIMS=s3://"+s.bucket+"/"+c.prefix)
	return c
}

// start starts runall number n on file with a log directory and results file of its own.
func (c *claimsE2E) start(n int, file string, args ...string) *proc {
	ns := strconv.Itoa(n)
	return c.e2e.start(append([]string{"--log-dir", "logs" + ns, "--results", "results" + ns + ".json"},
		append(args, testdata(file))...)...)
}

// lines reads $SHARED/name's lines, sorted; none when it does not exist.
func (c *claimsE2E) lines(name string) []string {
	if !c.exists(name) {
		return nil
	}
	return linesSorted(c.read(name))
}

// trialsRun maps each trial named in trials.txt to how often it ran.
func (c *claimsE2E) trialsRun() map[string]int {
	runs := map[string]int{}
	for _, l := range c.lines("trials.txt") {
		f := strings.Fields(l)
		runs[strings.Join(f[:len(f)-1], " ")]++
	}
	return runs
}

// done lists the sweep's done records, by the pid of the runall that wrote each.
func (c *claimsE2E) done() map[string]int {
	c.t.Helper()
	out := map[string]int{}
	for _, k := range c.keys(c.prefix + "done/") {
		body, _ := c.get(k)
		var rec struct {
			Owner struct{ PID int } `json:"owner"`
		}
		if err := json.Unmarshal([]byte(body), &rec); err != nil {
			c.t.Fatalf("%s: %v", k, err)
		}
		out[strings.TrimPrefix(k, c.prefix+"done/")] = rec.Owner.PID
	}
	return out
}

// TestClaimsEachTrialOnce runs three runalls on one sweep: every trial runs exactly once,
// the setup task in each, and the merged results land under the prefix. A fourth, started
// after the sweep is done, does nothing and exits 0.
func TestClaimsEachTrialOnce(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	var procs []*proc
	for n := range 3 {
		procs = append(procs, c.start(n, "claims/sweep.yml"))
	}
	pids := map[string]bool{}
	for _, p := range procs {
		p.wait().wantCode(t, 0)
		pids[strconv.Itoa(p.cmd.Process.Pid)] = true
	}
	runs := c.trialsRun()
	for n := range 12 {
		if name := "trial " + strconv.Itoa(n); runs[name] != 1 {
			t.Errorf("%s ran %d times, want once; trials.txt:\n%s", name, runs[name], c.read("trials.txt"))
		}
	}
	for _, l := range c.lines("trials.txt") {
		if f := strings.Fields(l); !pids[f[len(f)-1]] {
			t.Errorf("%q: not run by one of the three runalls (pids %v)", l, pids)
		}
	}
	if got := len(c.lines("setup.txt")); got != 3 {
		t.Errorf("the setup task ran %d times, want once per runall", got)
	}
	if got := len(c.done()); got != 12 {
		t.Errorf("%d done records, want 12: %v", got, c.done())
	}
	body, ok := c.get(c.prefix + "results.json")
	if !ok {
		t.Fatalf("no merged results under the prefix; it holds %q", c.keys(c.prefix))
	}
	var merged resultsFile
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		t.Fatal(err)
	}
	if merged.Status != "ok" || len(merged.Tasks) != 12 {
		t.Errorf("merged results: status %q, %d tasks, want ok and 12:\n%s", merged.Status, len(merged.Tasks), body)
	}

	again := c.start(3, "claims/sweep.yml").wait()
	again.wantCode(t, 0)
	if !strings.Contains(again.stdout, "nothing to do") {
		t.Errorf("a rerun of a finished sweep does not say it has nothing to do:\n%v", again)
	}
	if got := len(c.lines("setup.txt")); got != 3 {
		t.Errorf("the rerun of a finished sweep ran its setup task")
	}
}

// TestClaimsOtherFileRefused runs another task file against a prefix that holds a sweep.
func TestClaimsOtherFileRefused(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.start(0, "claims/sweep.yml").wait().wantCode(t, 0)
	r := c.start(1, "claims/other.yml").wait()
	r.wantCode(t, 2)
	if !strings.Contains(r.stderr, "holds another sweep") || !strings.Contains(r.stderr, "sweep.yml") {
		t.Errorf("the refusal does not say why:\n%v", r)
	}
	if runs := c.trialsRun(); runs["other 0"] != 0 {
		t.Errorf("a trial of the other file ran")
	}
}

// TestClaimsKilledTakenOver SIGKILLs the runall running "slow": once its lease runs out,
// another runall runs the trial, and records it as its own.
func TestClaimsKilledTakenOver(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.env = append(c.env, "SLOW=2")
	a := c.start(0, "claims/slow.yml", "--lease", "2s")
	eventually(t, "the first runall to start trial slow", func() bool {
		return c.exists("trials.txt") && strings.Contains(c.read("trials.txt"), "start slow")
	})
	a.signal(syscall.SIGKILL)
	_ = a.cmd.Wait() // killed: no exit code to check
	b := c.start(1, "claims/slow.yml", "--lease", "2s")
	b.wait().wantCode(t, 0)

	bpid := strconv.Itoa(b.cmd.Process.Pid)
	if !slices.Contains(c.lines("trials.txt"), "end slow "+bpid) {
		t.Errorf("trial slow was not run to its end by the second runall (pid %s):\n%s", bpid, c.read("trials.txt"))
	}
	done := c.done()
	if len(done) != 4 {
		t.Errorf("done records %v, want 4", done)
	}
	for k, pid := range done {
		if strconv.Itoa(pid) != bpid {
			t.Errorf("%s recorded by pid %d, want the second runall's %s", k, pid, bpid)
		}
	}
}

// TestClaimsLostLeaseStopsTrial overwrites the claim of the trial a runall runs, as a
// runall that took it over would: the first runall stops the trial and records nothing.
func TestClaimsLostLeaseStopsTrial(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.env = append(c.env, "SLOW=60")
	a := c.start(0, "claims/slow.yml", "--lease", "2s")
	eventually(t, "trial slow to start", func() bool {
		return c.exists("trials.txt") && strings.Contains(c.read("trials.txt"), "start slow")
	})
	claims := c.keys(c.prefix + "claims/")
	if len(claims) != 1 {
		t.Fatalf("claims %q, want the one of trial slow", claims)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.srv.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(c.bucket), Key: aws.String(claims[0]),
		Body: strings.NewReader(`{"owner":{"host":"elsewhere","pid":1},"token":"theirs","lease_ms":600000}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := a.wait()
	r.wantCode(t, 1) // the trial was stopped: a failure, and stop-on-failure halts the runall
	if !strings.Contains(r.stdout, "another runall took it over") {
		t.Errorf("the runall does not say it lost the claim:\n%v", r)
	}
	if slices.ContainsFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "end slow") }) {
		t.Error("trial slow ran to its end after its claim was lost")
	}
	if done := c.done(); len(done) != 0 {
		t.Errorf("done records %v, want none", done)
	}
}

// TestClaimsRace has twenty runalls race for two hundred tiny trials: none runs twice.
func TestClaimsRace(t *testing.T) {
	t.Parallel()
	const procs, trials = 20, 200
	c := newClaimsE2E(t)
	var b strings.Builder
	b.WriteString("config:\n  max-parallel-commands: 4\ntasks:\n  - name: sweep\n    parallel-tasks:\n")
	b.WriteString("      - name: trial <n>\n        cmd: echo \"trial <n> $PPID\" >> \"$SHARED/trials.txt\"\n        matrix:\n          n: [")
	for n := range trials {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	b.WriteString("]\n")
	file := c.path("race.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var ps []*proc
	for n := range procs {
		ns := strconv.Itoa(n)
		ps = append(ps, c.e2e.start("--log-dir", "logs"+ns, "--output", "plain", file))
	}
	for _, p := range ps {
		p.wait().wantCode(t, 0)
	}
	runs := c.trialsRun()
	for n := range trials {
		if name := "trial " + strconv.Itoa(n); runs[name] != 1 {
			t.Errorf("%s ran %d times, want once", name, runs[name])
		}
	}
	if got := len(c.done()); got != trials {
		t.Errorf("%d done records, want %d", got, trials)
	}
}

// TestClaimsStoreRestart stops MinIO in the middle of a sweep and starts it again, inside
// the lease: nothing is lost, nothing runs twice.
func TestClaimsStoreRestart(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t)
	e := newE2E(t)
	bucket := srv.NewBucket(t)
	e.env = append(withoutAWS(e.env), srv.Env()...)
	e.env = append(e.env, "SHARED="+e.dir, "XDG_CACHE_HOME="+t.TempDir(), "RUNALL_CLAIMS=s3://"+bucket+"/sweep/")
	c := &claimsE2E{s3E2E: &s3E2E{e2e: e, srv: srv, bucket: bucket}, prefix: "sweep/"}
	var ps []*proc
	for n := range 2 {
		ps = append(ps, c.start(n, "claims/sweep.yml", "--lease", "20s"))
	}
	eventually(t, "a first trial to finish", func() bool { return c.exists("trials.txt") })
	srv.Stop()
	if n := len(c.lines("trials.txt")); n >= 12 {
		t.Fatalf("the sweep was over (%d trials run) before the store went away: nothing tested", n)
	}
	// Trials end while the store is away: their records must wait for it, not be lost.
	time.Sleep(3 * time.Second)
	srv.Restart(t)
	for _, p := range ps {
		p.wait().wantCode(t, 0)
	}
	runs := c.trialsRun()
	for n := range 12 {
		if name := "trial " + strconv.Itoa(n); runs[name] != 1 {
			t.Errorf("%s ran %d times, want once", name, runs[name])
		}
	}
	if got := len(c.done()); got != 12 {
		t.Errorf("%d done records, want 12", got)
	}
}
