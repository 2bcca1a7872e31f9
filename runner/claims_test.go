package runner

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/s3sync"
)

// sweepFile is a task file of n trials that each append their name to out, after sleeping.
func sweepFile(out string, n int, sleep string, maxParallel int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "config:\n  max-parallel-commands: %d\ntasks:\n  - name: sweep\n    parallel-tasks:\n", maxParallel)
	for i := range n {
		fmt.Fprintf(&b, "      - name: t%02d\n        cmd: sleep %s; echo t%02d >> %q\n", i, sleep, i, out)
	}
	return b.String()
}

func ranLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	slices.Sort(lines)
	return lines
}

// TestClaimsShareTrials runs two runs of one file on one in-memory queue: each trial runs
// in exactly one of them, and the other lists it as done elsewhere.
func TestClaimsShareTrials(t *testing.T) {
	store := claimstest.NewMem()
	out := filepath.Join(t.TempDir(), "ran")
	file := sweepFile(out, 8, "0.05", 2)
	var wg sync.WaitGroup
	res := make([]*results.Run, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _, err := runFile(t, file, Options{Claims: ClaimsOptions{Store: store, Lease: 2 * time.Second}})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
			res[i] = r
		}()
	}
	wg.Wait()
	var want []string
	for i := range 8 {
		want = append(want, fmt.Sprintf("t%02d", i))
	}
	if got := ranLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("trials run %q, want each once: %q", got, want)
	}
	for _, name := range want {
		a, b := byName(res[0])[name], byName(res[1])[name]
		if (a.Status == results.StatusOK) == (b.Status == results.StatusOK) {
			t.Errorf("%s: %s in one run and %s in the other, want ok in exactly one", name, a.Status, b.Status)
		}
	}
	if !slices.Contains(store.Keys(), claims.ResultsKey) {
		t.Errorf("no merged results in the store: %q", store.Keys())
	}
}

// TestClaimsOnlyWhatStarts checks that a run holds no more claims than it runs trials:
// admission decides when it claims the next.
func TestClaimsOnlyWhatStarts(t *testing.T) {
	store := claimstest.NewMem()
	out := filepath.Join(t.TempDir(), "ran")
	done := make(chan struct{})
	most := 0
	go func() {
		defer close(done)
		_, _, err := runFile(t, sweepFile(out, 4, "0.3", 1), Options{Claims: ClaimsOptions{Store: store, Lease: 2 * time.Second}})
		if err != nil {
			t.Error(err)
		}
	}()
	for {
		select {
		case <-done:
			if most != 1 {
				t.Errorf("at most %d trials claimed and not done at once, want 1 (max-parallel-commands: 1)", most)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		held := 0
		for _, k := range store.Keys() {
			if strings.HasPrefix(k, "claims/") && !slices.Contains(store.Keys(), "done/"+strings.TrimPrefix(k, "claims/")) {
				held++
			}
		}
		most = max(most, held)
	}
}

// TestClaimsStoreOutage takes the store away for a moment, well inside the lease: the trial
// goes on, and is recorded once the store is back.
func TestClaimsStoreOutage(t *testing.T) {
	store := claimstest.NewMem()
	out := filepath.Join(t.TempDir(), "ran")
	go func() {
		for !slices.ContainsFunc(store.Keys(), func(k string) bool { return strings.HasPrefix(k, "claims/") }) {
			time.Sleep(10 * time.Millisecond)
		}
		store.Fail(true)
		time.Sleep(500 * time.Millisecond)
		store.Fail(false)
	}()
	res, _, err := runFile(t, sweepFile(out, 1, "1.5", 1), Options{Claims: ClaimsOptions{Store: store, Lease: 6 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ranLines(t, out); !slices.Equal(got, []string{"t00"}) || res.Tasks[0].Status != results.StatusOK {
		t.Fatalf("ran %q with status %s, want t00 once, ok", got, res.Tasks[0].Status)
	}
	if !slices.Contains(store.Keys(), "done/"+strings.TrimPrefix(claimKeyOf(store), "claims/")) {
		t.Errorf("no done record: %q", store.Keys())
	}
}

func claimKeyOf(m *claimstest.Mem) string {
	for _, k := range m.Keys() {
		if strings.HasPrefix(k, "claims/") {
			return k
		}
	}
	return ""
}

// TestClaimsStoreGoneStopsTrial takes the store away for longer than the lease: the lease
// cannot be renewed, so the trial is stopped rather than risk running twice, as preempted,
// not failed; once the store is back, the claim has expired and the run claims the trial
// again and runs it to its end.
func TestClaimsStoreGoneStopsTrial(t *testing.T) {
	store := claimstest.NewMem()
	dir := t.TempDir()
	out, stopped, quick := filepath.Join(dir, "ran"), filepath.Join(dir, "stopped"), filepath.Join(dir, "quick")
	file := fmt.Sprintf("tasks:\n  - name: sweep\n    parallel-tasks:\n      - name: t00\n"+
		"        cmd: if [ -e %q ]; then echo t00 >> %q; else trap 'echo stopped > %q; exit 143' TERM; sleep 30 & wait; fi\n", quick, out, stopped)
	go func() {
		for claimKeyOf(store) == "" {
			time.Sleep(10 * time.Millisecond)
		}
		store.Fail(true)
		for _, err := os.Stat(stopped); err != nil; _, err = os.Stat(stopped) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := os.WriteFile(quick, nil, 0o644); err != nil {
			panic(err)
		}
		store.Fail(false)
	}()
	res, output, err := runFile(t, file, Options{Grace: time.Second, Claims: ClaimsOptions{Store: store, Lease: time.Second}})
	if err != nil {
		t.Fatalf("run: %v, want the trial run again once the store is back\n%s", err, output)
	}
	tr := res.Tasks[0]
	var classes []string
	for _, a := range tr.AttemptList {
		classes = append(classes, cmp.Or(a.Class, "ok"))
	}
	if tr.Status != results.StatusOK || !slices.Equal(classes, []string{"preempted", "ok"}) || !strings.Contains(output, "lost the claim") {
		t.Errorf("trial %s, attempts %q, want ok after a preempted attempt that lost the claim\n%s", tr.Status, classes, output)
	}
	if got := ranLines(t, out); !slices.Equal(got, []string{"t00"}) {
		t.Errorf("ran %q, want t00 once to its end", got)
	}
}

// TestClaimsInterruptedTrialGivenBack stops a run with SIGTERM mid-trial, as an evicted Pod
// is: the trial did not fail for good, so it is not recorded as done, and its claim is given
// back for another runall to take at once rather than after the lease.
func TestClaimsInterruptedTrialGivenBack(t *testing.T) {
	store := claimstest.NewMem()
	dir := t.TempDir()
	out, quick := filepath.Join(dir, "ran"), filepath.Join(dir, "quick")
	// Long in the first runall, quick in the next: the same trial, so the same sweep.
	file := fmt.Sprintf("tasks:\n  - name: sweep\n    parallel-tasks:\n      - name: t00\n"+
		"        cmd: if [ -e %q ]; then echo t00 >> %q; else sleep 30; fi\n", quick, out)
	sigs := make(chan os.Signal, 1)
	go func() {
		for claimKeyOf(store) == "" {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGTERM
	}()
	_, output, err := runFile(t, file, Options{Grace: time.Second, Signals: sigs, Claims: ClaimsOptions{Store: store, Lease: time.Hour}})
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("run: %v, want interrupted\n%s", err, output)
	}
	if slices.ContainsFunc(store.Keys(), func(k string) bool { return strings.HasPrefix(k, "done/") }) {
		t.Fatalf("the interrupted trial was recorded as done: %q", store.Keys())
	}
	if k := claimKeyOf(store); k != "" {
		t.Errorf("claim %s still there, want it given back", k)
	}
	// Another runall takes it at once, well before the hour-long lease would let it.
	stop := make(chan os.Signal, 1)
	timer := time.AfterFunc(30*time.Second, func() { stop <- syscall.SIGTERM })
	defer timer.Stop()
	if err := os.WriteFile(quick, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, output, err := runFile(t, file, Options{Signals: stop, Claims: ClaimsOptions{Store: store, Lease: time.Hour}})
	if err != nil || res.Tasks[0].Status != results.StatusOK || !slices.Equal(ranLines(t, out), []string{"t00"}) {
		t.Fatalf("the next runall did not run the given-back trial: %v\n%s", err, output)
	}
}

// TestClaimsWaitOn2099ClaimEnds plants a claim on a trial whose lease runs to 2099, as
// another runall's: the run says which trial is held, by whom and until when, and that the
// lease is not trusted, then takes the trial over once the claim stayed unchanged for the
// sweep's lease, instead of waiting until killed. While it waits, the run's view (the live
// page's and /api/run's) gives the claim as the trial's reason.
func TestClaimsWaitOn2099ClaimEnds(t *testing.T) {
	store := claimstest.NewMem()
	dir := t.TempDir()
	out := filepath.Join(dir, "ran")
	file := sweepFile(out, 1, "0", 1)
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	key := plan.Key(p.Trials()[0]) // its name in the queue
	until := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	body := fmt.Sprintf(`{"owner":{"host":"elsewhere","pid":7,"run_id":"theirs"},"token":"x","lease_ms":%d,"renewed_at":"2099-01-01T00:00:00Z"}`,
		time.Until(until).Milliseconds())
	if _, err := store.Put(t.Context(), "claims/"+key+".json", []byte(body), s3sync.Condition{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	timer := time.AfterFunc(30*time.Second, func() { stop <- syscall.SIGTERM })
	defer timer.Stop()
	w := &waitWatcher{}
	res, output, err := runFile(t, file, Options{Signals: stop, Server: w, Claims: ClaimsOptions{Store: store, Lease: time.Second}})
	if err != nil || res.Tasks[0].Status != results.StatusOK || !slices.Equal(ranLines(t, out), []string{"t00"}) {
		t.Fatalf("the trial held by the 2099 claim was not taken over: %v\n%s", err, output)
	}
	if w.mid == nil || w.mid.Status != results.StatusPending || !strings.HasPrefix(w.mid.Reason, "another runall's claim under ") ||
		!strings.Contains(w.mid.Reason, "held by elsewhere pid 7 (run theirs)") {
		t.Errorf("while it waited, the run's view of t00: %+v; want pending, held by elsewhere pid 7", w.mid)
	}
	for _, want := range []string{"[t00] waiting: another runall's claim under ", ": held by elsewhere pid 7 (run theirs) until ",
		"not trusted: its lease of ", "is longer than the sweep's 1s", "its renewal is dated 2099-01-01T00:00:00Z, in the future"} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q\n%s", want, output)
		}
	}
}

// waitWatcher is a Server that keeps the run's view of a trial as it is said to wait on
// another runall's claim.
type waitWatcher struct {
	view View
	mid  *results.Task
}

func (w *waitWatcher) Serve(v View) (string, error) { w.view = v; return "127.0.0.1:0", nil }

func (w *waitWatcher) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.TaskWaiting && strings.HasPrefix(ev.Reason, "another runall's claim") && w.mid == nil {
		r := byName(w.view.Results())[ev.Task.Name]
		w.mid = &r
	}
}

// TestClaimsTornSweepJSONEnds: a sweep.json that is not runall's (torn here) ends the run at
// once with claims.ErrOtherSweep, saying what to do, instead of trying again until killed.
func TestClaimsTornSweepJSONEnds(t *testing.T) {
	store := claimstest.NewMem()
	if _, err := store.Put(t.Context(), "sweep.json", []byte(`{"hash":"3f`), s3sync.Condition{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	timer := time.AfterFunc(20*time.Second, func() { stop <- syscall.SIGTERM })
	defer timer.Stop()
	_, output, err := runFile(t, sweepFile(filepath.Join(t.TempDir(), "ran"), 1, "0", 1),
		Options{Signals: stop, Claims: ClaimsOptions{Store: store, Lease: time.Second}})
	if !errors.Is(err, claims.ErrOtherSweep) || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("run: %v, want claims.ErrOtherSweep saying what to do\n%s", err, output)
	}
}
