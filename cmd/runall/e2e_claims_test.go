package main_test

// End-to-end tests of --claims: several runall processes share one queue of trials through
// the package's MinIO.

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/eventually"
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
		out[strings.TrimPrefix(k, c.prefix+"done/")] = c.record(k).Owner.PID
	}
	return out
}

// records maps each trial recorded as done, by name, to the pid of the runall that
// recorded it.
func (c *claimsE2E) records() map[string]int {
	c.t.Helper()
	out := map[string]int{}
	for _, k := range c.keys(c.prefix + "done/") {
		rec := c.record(k)
		if len(rec.Result.Tasks) != 1 {
			c.t.Fatalf("%s: %d commands in its result, want 1", k, len(rec.Result.Tasks))
		}
		out[rec.Result.Tasks[0].Name] = rec.Owner.PID
	}
	return out
}

// doneRecord is the part of a done record the tests read: its result is the recording
// runall's part of the run.
type doneRecord struct {
	Owner  struct{ PID int } `json:"owner"`
	Result struct {
		RunID string       `json:"run_id"`
		Tasks []taskResult `json:"tasks"`
	} `json:"result"`
}

func (c *claimsE2E) record(key string) doneRecord {
	c.t.Helper()
	body, _ := c.get(key)
	var rec doneRecord
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		c.t.Fatalf("%s: %v", key, err)
	}
	return rec
}

// merged reads the merged results under the prefix.
func (c *claimsE2E) merged() resultsFile {
	c.t.Helper()
	body, ok := c.get(c.prefix + "results.json")
	if !ok {
		c.t.Fatalf("no merged results under the prefix; it holds %q", c.keys(c.prefix))
	}
	var merged resultsFile
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		c.t.Fatal(err)
	}
	return merged
}

// startOnGPU starts runall number n on file on a simulated 32 GiB GPU of its own, as a Pod
// with one GPU would be.
func (c *claimsE2E) startOnGPU(n int, file string, args ...string) *proc {
	ns := strconv.Itoa(n)
	e := c.withEnv("RUNALL_FAKE_GPU_STATE=" + c.path("gpu"+ns))
	return e.start(append([]string{"--fake-gpus", "32GiB", "--log-dir", "logs" + ns, "--results", "results" + ns + ".json"},
		append(args, testdata(file))...)...)
}

// TestClaimsEachTrialOnce has three runalls, each on a simulated GPU of its own, share
// thirty trials of 0.5-3 s: every trial runs exactly once, by one of them, and is recorded
// by the runall that ran it; the setup task runs in each; the merged results land under the
// prefix.
func TestClaimsEachTrialOnce(t *testing.T) {
	t.Parallel()
	const trials = 30
	c := newClaimsE2E(t)
	var procs []*proc
	for n := range 3 {
		procs = append(procs, c.startOnGPU(n, "claims/gpu.yml"))
	}
	pids := map[string]bool{}
	for _, p := range procs {
		p.wait().wantCode(t, 0)
		pids[strconv.Itoa(p.cmd.Process.Pid)] = true
	}
	runs, ranBy := c.trialsRun(), map[string]string{}
	for _, l := range c.lines("trials.txt") {
		f := strings.Fields(l)
		name, pid := strings.Join(f[:len(f)-1], " "), f[len(f)-1]
		ranBy[name] = pid
		if !pids[pid] {
			t.Errorf("%q: not run by one of the three runalls (pids %v)", l, pids)
		}
	}
	for n := range trials {
		if name := "trial " + strconv.Itoa(n); runs[name] != 1 {
			t.Errorf("%s ran %d times, want once; trials.txt:\n%s", name, runs[name], c.read("trials.txt"))
		}
	}
	if got := len(c.lines("setup.txt")); got != 3 {
		t.Errorf("the setup task ran %d times, want once per runall", got)
	}
	recs := c.records()
	if len(recs) != trials {
		t.Errorf("%d done records, want %d", len(recs), trials)
	}
	for name, pid := range recs {
		if ranBy[name] != strconv.Itoa(pid) {
			t.Errorf("%s: recorded by pid %d, but run by pid %s", name, pid, ranBy[name])
		}
	}
	merged := c.merged()
	if merged.Status != "ok" || len(merged.Tasks) != trials {
		t.Errorf("merged results: status %q, %d tasks, want ok and %d", merged.Status, len(merged.Tasks), trials)
	}
	for _, tr := range merged.Tasks {
		if tr.Status != "ok" || !strings.Contains(tr.LogFile, ":") {
			t.Errorf("merged results: %s: status %q, log %q, want ok and a log file named by its host", tr.Name, tr.Status, tr.LogFile)
		}
	}
}

// TestClaimsRerunFinished starts the Job again once its sweep is done: the rerun does
// nothing, not even the setup task, leaves the merged results as they were, and exits 0.
func TestClaimsRerunFinished(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	for _, p := range []*proc{c.start(0, "claims/sweep.yml"), c.start(1, "claims/sweep.yml")} {
		p.wait().wantCode(t, 0)
	}
	before, _ := c.get(c.prefix + "results.json")
	again := c.start(2, "claims/sweep.yml").wait()
	again.wantCode(t, 0)
	if !strings.Contains(again.stdout, "nothing to do") {
		t.Errorf("a rerun of a finished sweep does not say it has nothing to do:\n%v", again)
	}
	if got := len(c.lines("setup.txt")); got != 2 {
		t.Errorf("the rerun of a finished sweep ran its setup task")
	}
	if got := len(c.lines("trials.txt")); got != 12 {
		t.Errorf("%d trial runs after the rerun, want the first two runalls' 12", got)
	}
	if after, _ := c.get(c.prefix + "results.json"); after != before || before == "" {
		t.Errorf("the rerun changed the merged results (or there were none):\n%s\n---\n%s", before, after)
	}
}

// TestClaimsFailedSweep: a trial that fails is recorded once, as failed for good. The
// runall that ran it stops (stop-on-failure); another finishes the sweep, whose merged
// results say it failed; each exits 1, and so does a rerun, which runs nothing.
func TestClaimsFailedSweep(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.env = append(c.env, "FAIL=trial 3")
	c.start(0, "claims/sweep.yml").wait().wantCode(t, 1)
	c.start(1, "claims/sweep.yml").wait().wantCode(t, 1)
	runs := c.trialsRun()
	for n := range 12 {
		if name := "trial " + strconv.Itoa(n); runs[name] != 1 {
			t.Errorf("%s ran %d times, want once", name, runs[name])
		}
	}
	if merged := c.merged(); merged.Status != "failed" || len(merged.Tasks) != 12 {
		t.Errorf("merged results: status %q, %d tasks, want failed and 12", merged.Status, len(merged.Tasks))
	}
	again := c.start(2, "claims/sweep.yml").wait()
	again.wantCode(t, 1)
	if !strings.Contains(again.stdout, "nothing to do") || len(c.lines("trials.txt")) != 12 {
		t.Errorf("the rerun of a failed, finished sweep ran something:\n%v", again)
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

// TestClaimsKilledTakenOver starts three runalls and SIGKILLs the one that runs trial
// "slow", with the trial's processes, as a Pod's death would: once its lease runs out,
// another runall runs the trial and records it, and both others exit 0.
func TestClaimsKilledTakenOver(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.env = append(c.env, "SLOW=3")
	var ps []*proc
	for n := range 3 {
		ps = append(ps, c.start(n, "claims/slow.yml", "--lease", "2s"))
	}
	var first []string
	eventually.True(t, "a runall to start trial slow", func() bool {
		i := slices.IndexFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "start slow ") })
		if i >= 0 {
			first = strings.Fields(c.lines("trials.txt")[i]) // start slow RUNALL_PID TRIAL_PGID
		}
		return i >= 0
	})
	victim := slices.IndexFunc(ps, func(p *proc) bool { return strconv.Itoa(p.cmd.Process.Pid) == first[2] })
	if victim < 0 {
		t.Fatalf("trial slow started by pid %s, none of the runalls", first[2])
	}
	pgid, _ := strconv.Atoi(first[3])
	killed := time.Now()
	ps[victim].signal(syscall.SIGKILL)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = ps[victim].cmd.Wait() // killed: no exit code to check

	eventually.True(t, "another runall to take trial slow over", func() bool {
		return slices.ContainsFunc(c.lines("trials.txt"), func(l string) bool {
			return strings.HasPrefix(l, "start slow ") && !strings.HasPrefix(l, "start slow "+first[2]+" ")
		})
	})
	t.Logf("trial slow taken over %v after its runall was killed (lease 2s)", time.Since(killed).Round(10*time.Millisecond))
	pids := map[int]bool{}
	for i, p := range ps {
		if i != victim {
			p.wait().wantCode(t, 0)
			pids[p.cmd.Process.Pid] = true
		}
	}
	if n := slices.IndexFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "end slow ") }); n < 0 {
		t.Errorf("trial slow was not run to its end:\n%s", c.read("trials.txt"))
	}
	recs := c.records()
	if len(recs) != 4 {
		t.Errorf("done records %v, want 4", recs)
	}
	if !pids[recs["slow"]] {
		t.Errorf("slow recorded by pid %d, want one of the survivors %v", recs["slow"], pids)
	}
	if c.merged().Status != "ok" {
		t.Errorf("merged results not ok")
	}
}

// TestClaimsLostLeaseStopsTrial overwrites the claim of the trial a runall runs, as a
// runall that took it over would: the first runall stops the trial, records nothing of that
// attempt, and holds it no failure: the trial goes back to its line, and once the other's
// claim has expired (it never renews it) this runall claims it again and runs it to its end.
func TestClaimsLostLeaseStopsTrial(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.env = append(c.env, "SLOW=60")
	a := c.start(0, "claims/slow.yml", "--lease", "2s")
	eventually.True(t, "trial slow to start", func() bool {
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
		Body: strings.NewReader(`{"owner":{"host":"elsewhere","pid":1},"token":"theirs","lease_ms":3000}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.writeFile("slow-is-quick", "") // its next start ends at once
	r := a.wait()
	r.wantCode(t, 0) // a lost claim is no failure of the trial
	if !strings.Contains(r.stdout, "another runall took it over") || !strings.Contains(r.stdout, "whoever claims it next runs it") {
		t.Errorf("the runall does not say it lost the claim:\n%v", r)
	}
	lines := c.lines("trials.txt")
	starts := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, "start slow ") })
	ends := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, "end slow ") })
	if len(starts) != 2 || len(ends) != 1 {
		t.Errorf("trial slow started %d times and ended %d, want 2 and 1 (stopped as its claim was lost, then run again):\n%s", len(starts), len(ends), c.read("trials.txt"))
	}
	if recs := c.records(); recs["slow"] != a.cmd.Process.Pid {
		t.Errorf("done records %v, want slow's by this runall (pid %d), after it claimed it again", recs, a.cmd.Process.Pid)
	}
	var res faultResults
	c.readJSON("results0.json", &res)
	if got := res.classes()["slow"]; strings.Join(got, ",") != "preempted,ok" {
		t.Errorf("slow's attempts' classes %q, want preempted then ok\n%v", got, r)
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
	eventually.True(t, "a first trial to finish", func() bool { return c.exists("trials.txt") })
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

// TestClaimsUsageErrors: a claims setting that cannot work is refused before anything
// runs, with exit 2 and a message that says what to do.
func TestClaimsUsageErrors(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = append(e.env, "SHARED="+e.dir)
	bad := e.path("bad.yml")
	if err := os.WriteFile(bad, []byte("config:\n  claims: http://host/prefix/\ntasks:\n  - name: a\n    cmd: 'true'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not s3", []string{"--claims", "/tmp/queue", testdata("claims/sweep.yml")}, "want an s3://BUCKET/PREFIX/ URL"},
		{"no bucket", []string{"--claims", "s3://", testdata("claims/sweep.yml")}, "want an s3://BUCKET/PREFIX/ URL"},
		{"with shards", []string{"--claims", "s3://b/p/", "--shard", "0/2", testdata("claims/sweep.yml")}, "alternatives"},
		{"short lease", []string{"--claims", "s3://b/p/", "--lease", "100ms", testdata("claims/sweep.yml")}, "at least 1s"},
		{"long lease", []string{"--claims", "s3://b/p/", "--lease", "2000000h", testdata("claims/sweep.yml")}, "--lease 2000000h0m0s: at most 24h0m0s"},
		{"config", []string{bad}, "bad.yml:2:11: claims: want an s3://BUCKET/PREFIX/ URL"},
		{"search", []string{"--claims", "s3://b/p/", testdata("adapt/badask.yml")}, "badask.yml:10:9: search: runs in one runall, not with --claims: its trials are asked for as the run goes"},
		{"search shards", []string{"--shard", "1/2", testdata("adapt/badask.yml")}, "not with --shard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.args...)
			r.wantCode(t, 2)
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not say %q:\n%v", tt.want, r)
			}
			if e.exists("setup.txt") {
				t.Errorf("the setup task ran")
			}
		})
	}
}

// TestClaimsASHAShared: three runalls share one asha sweep through the claims prefix; the
// bad trial is pruned by its runall on the rung values the other two runalls recorded.
func TestClaimsASHAShared(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.prunedByOthers("claims/asha.yml", "asha: acc 0.1 at step 1 is not in the top 1/3 of the 3 values recorded")
	if rung := c.keys(c.prefix + "rungs/"); len(rung) != 3 {
		t.Errorf("rung values under the prefix: %q, want 3 (step 1 of each trial)", rung)
	}
}

// TestClaimsMedianShared: three runalls share one median sweep through the claims prefix;
// the bad trial is stopped by its runall on the running averages the other two recorded.
func TestClaimsMedianShared(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	c.prunedByOthers("claims/median.yml", "worse than the median 0.9 of 2 other trials' running averages")
	if keys := c.keys(c.prefix + "averages/"); len(keys) < 80 {
		t.Errorf("%d running averages under the prefix, want 40 of each good trial and bad's", len(keys))
	}
	if keys := c.keys(c.prefix + "rungs/"); len(keys) != 0 {
		t.Errorf("median wrote asha's rung values: %q", keys)
	}
}

// TestClaimsForecastShared: under --claims, forecast's values at max are written under the
// prefix, and the runall that ran bad alone stops it by the value the others reached there.
func TestClaimsForecastShared(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	// The others' values reach the prefix a moment after their scripts printed them: bad's
	// runall judges it by the best value they reached at max when those have landed, else by
	// their forecasts, which it read there too; either is what only the others recorded.
	c.prunedByOthers("claims/forecast.yml", "than 0.8297 (the best value reached at step 12)", "(the best of the other trials' forecasts")
	if keys := c.keys(c.prefix + "forecasts/"); !slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "/12/") }) {
		t.Errorf("no value at max under the prefix: %q", keys)
	}
}

// prunedByOthers runs file in three runalls, one trial each (good-1, good-2, bad): all exit
// 0, and the one that ran bad pruned it, saying why (one of whys), by values only the others
// recorded.
func (c *claimsE2E) prunedByOthers(file string, whys ...string) {
	t := c.t
	t.Helper()
	var procs []*proc
	for n := range 3 {
		procs = append(procs, c.start(n, file))
	}
	var prunedBy *proc
	for n, p := range procs {
		r := p.wait()
		r.wantCode(t, 0)
		if strings.Contains(r.stdout, "[bad] pruned") {
			prunedBy = p
			if !slices.ContainsFunc(whys, func(why string) bool { return strings.Contains(r.stdout, why) }) {
				t.Errorf("runall %d: the prune says none of %q\n%v", n, whys, r)
			}
		}
	}
	if prunedBy == nil {
		t.Fatal("no runall pruned bad")
	}
	for _, l := range c.lines("trials.txt") {
		if strings.HasPrefix(l, "bad ") {
			t.Errorf("bad ran to its end: %s", l)
		}
		if pid := strings.Fields(l)[1]; pid == strconv.Itoa(prunedBy.cmd.Process.Pid) {
			t.Errorf("%s: ran in the runall that pruned bad: its values came from another", l)
		}
	}
	c.wantMerged(map[string]string{"good-1": "ok", "good-2": "ok", "bad": "pruned"})
}

// wantMerged checks the statuses in the merged results under the prefix.
func (c *claimsE2E) wantMerged(want map[string]string) {
	c.t.Helper()
	got := map[string]string{}
	for _, tr := range c.merged().Tasks {
		got[tr.Name] = tr.Status
	}
	if !maps.Equal(got, want) {
		c.t.Errorf("merged results: %v, want %v", got, want)
	}
}

// TestClaimsMedianKilled: the running averages of a runall that was SIGKILLed stay under the
// prefix, and stop a trial of the runall that takes the sweep over, which recorded none of
// its own.
func TestClaimsMedianKilled(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	first := c.start(0, "claims/median-killed.yml", "--lease", "2s")
	// Steps 1 to 5 of good-1 and good-2: ten values recorded, none in flight.
	eventually.True(t, "the first runall to record good-1's and good-2's five running averages", func() bool {
		return len(c.keys(c.prefix+"averages/")) == 10
	})
	first.signal(syscall.SIGKILL)
	_ = first.cmd.Wait() // killed: no exit code to check
	for _, l := range c.lines("pgids.txt") {
		pgid, _ := strconv.Atoi(l)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	c.writeFile("killed", "")

	r := c.start(1, "claims/median-killed.yml", "--lease", "2s").wait()
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "[bad] pruned") || !strings.Contains(r.stdout, "worse than the median 0.9 of 2 other trials' running averages") {
		t.Errorf("bad was not stopped by the killed runall's running averages\n%v", r)
	}
	if slices.ContainsFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "bad ") }) {
		t.Errorf("bad ran to its end:\n%s", c.read("trials.txt"))
	}
	c.wantMerged(map[string]string{"good-1": "ok", "good-2": "ok", "bad": "pruned"})
}

// TestClaimsMergedObjective: two runalls share a sweep with an objective. The merged results
// under the prefix go through the same merge as shards' results: they carry the objective,
// name the best trial and each runall's run id. A record that cannot be read makes the
// conclusion fail, naming it.
func TestClaimsMergedObjective(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	for _, p := range []*proc{c.start(0, "claims/objective.yml"), c.start(1, "claims/objective.yml")} {
		p.wait().wantCode(t, 0)
	}
	ids := map[string]bool{}
	for _, name := range []string{"results0.json", "results1.json"} {
		var own resultsFile
		if err := json.Unmarshal([]byte(c.read(name)), &own); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids[own.RunID] = true
	}
	body, _ := c.get(c.prefix + "results.json")
	var merged struct {
		RunID     string `json:"run_id"`
		Best      string `json:"best"`
		Objective *struct {
			Metric string `json:"metric"`
			Mode   string `json:"mode"`
		} `json:"objective"`
		Tasks []taskResult `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		t.Fatalf("merged results: %v\n%s", err, body)
	}
	if merged.Best != "trial 2" || merged.Objective == nil || merged.Objective.Metric != "loss" || len(merged.Tasks) != 4 {
		t.Errorf("merged results: best %q, objective %+v, %d tasks; want trial 2, loss, 4\n%s", merged.Best, merged.Objective, len(merged.Tasks), body)
	}
	for _, id := range strings.Split(merged.RunID, ",") {
		if !ids[id] {
			t.Errorf("merged run id %q, want those of the runalls that ran trials, of %v", merged.RunID, ids)
		}
	}

	// Corrupt one record and drop the merged results: a rerun must conclude again, and fails.
	recs := c.keys(c.prefix + "done/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.srv.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(c.bucket), Key: aws.String(recs[0]), Body: strings.NewReader(`{"key": "x", "result": {"tasks": 7}}`),
	})
	if err == nil {
		_, err = c.srv.Client().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(c.prefix + "results.json")})
	}
	if err != nil {
		t.Fatal(err)
	}
	r := c.start(2, "claims/objective.yml").wait()
	r.wantCode(t, 1)
	if name := strings.TrimPrefix(recs[0], c.prefix); !strings.Contains(r.stderr+r.stdout, name) {
		t.Errorf("the conclusion does not name the corrupt record %s:\n%v", name, r)
	}
}
