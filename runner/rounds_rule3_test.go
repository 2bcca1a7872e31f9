package runner

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// Issue 34, rule 3: a pause lands where its rule decides, and the record says what happened.
// The trials here are shell scripts that print their metric, save their step into their
// checkpoint directory and resume from it, fast: the timing is theirs, not a loaded machine's.

// widthTrial is a trial of the matrix width × s whose script refuses a width that is not a
// whole number (as argparse's type=int does), reports acc = step·width + s for 8 steps,
// and fails at its resume when its checkpoint directory matches $FAIL_D (the trial's own
// directory: pbt's new values keep it).
const widthTrial = `      - name: w=<width> s=<s>
        matrix: {width: [8, 32, 128], s: [1, 2, 3]}
        checkpoint: ck/<width>-<s>
        cmd: |
          case <width> in *.*) echo "invalid int value: '<width>'" >&2; exit 2;; esac
          d=ck/<width>-<s>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); fi
          if [ -n "$RUNALL_RESUMED" ]; then case $d in $FAIL_D) echo "cannot go on" >&2; exit 3;; esac; fi
          while [ $i -lt 8 ]; do i=$((i+1)); echo runall-metric acc=$((i*<width>+<s>)); echo $i > $d/step.tmp; mv $d/step.tmp $d/step; echo runall-checkpoint step=$i; sleep 0.05; done
`

// noPaused fails t for each trial the sweep's results leave paused.
func noPaused(t *testing.T, res *results.Run, out string) {
	t.Helper()
	for _, r := range res.Tasks {
		if r.Status == results.StatusPaused {
			t.Errorf("%s is left paused at the end of the sweep (%s)\n%s", r.Name, r.Reason, out)
		}
	}
}

// TestPBTListParamNeverLeavesItsList (issue 34, rule 3): pbt perturbs width: [8, 32, 128] to
// a neighbour in its list, never to --width 102.4: every trial of the population runs to its
// end, ok, and none is left paused.
func TestPBTListParamNeverLeavesItsList(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 3, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: {method: pbt, interval: 2, max: 6, quantile: 0.34, perturb: [0.8, 1.25], resample: 0}
    parallel-tasks:
`+widthTrial, Options{Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, r := range res.Tasks {
		if r.Status != results.StatusOK {
			t.Errorf("%s: %s (%s), want ok", r.Name, r.Status, r.Reason)
		}
		for _, e := range r.Lineage {
			if w := e.Params["width"]; w != "8" && w != "32" && w != "128" {
				t.Errorf("%s went on with width %q at step %d, a value not in its list", r.Name, w, e.Step)
			}
		}
	}
	if strings.Contains(out, "invalid int value") {
		t.Errorf("a trial ran with a width not in its list\n%s", out)
	}
}

// TestRoundGoesOnWithoutFailedTrial (issue 34, rule 3): a trial of a round that fails at its
// resume is not waited for: under sha, hyperband and pbt the round goes on, the sweep runs to
// its end, and no trial is left paused; where the failure halts the run (stop-on-failure),
// the trials paused are ended as stopped, not left paused.
func TestRoundGoesOnWithoutFailedTrial(t *testing.T) {
	rules := []string{
		"{method: pbt, interval: 2, max: 6, quantile: 0.34, perturb: [0.8, 1.25], resample: 0}",
		"{method: sha, grace: 2, reduction: 2, max: 8}",
		"{method: hyperband, grace: 2, reduction: 2, max: 8}",
	}
	for _, rule := range rules {
		for _, stop := range []string{"false", "true"} {
			t.Run(rule+" stop-on-failure "+stop, func(t *testing.T) {
				// The trials of width 128 lead every round: each rule resumes them, and
				// they fail there.
				res, out, err := runFile(t, `
config: {max-parallel-commands: 3, stop-on-failure: `+stop+`, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: `+rule+`
    parallel-tasks:
`+widthTrial, Options{Grace: 5 * time.Second, Environ: []string{"FAIL_D=ck/128-*"}})
				if res == nil {
					t.Fatalf("run: %v\n%s", err, out)
				}
				failed := 0
				for _, r := range res.Tasks {
					switch r.Status {
					case results.StatusFailed:
						failed++
					case results.StatusOK, results.StatusPruned:
					case results.StatusStopped, results.StatusSkipped:
						if stop == "false" {
							t.Errorf("%s: %s (%s), want the sweep to go on without the failed trials", r.Name, r.Status, r.Reason)
						}
					default:
						t.Errorf("%s: %s (%s)", r.Name, r.Status, r.Reason)
					}
				}
				if failed == 0 {
					t.Errorf("no trial failed at its resume\n%s", out)
				}
				noPaused(t, res, out)
			})
		}
	}
}

// TestSHANoCheckpointSaysNotPaused (issue 34, rule 3 and point 6): a trial whose script never
// saves into its checkpoint: cannot be paused at sha's rung; it ends pruned with a reason that
// says so (no checkpoint kept), not one that says it paused. One whose checkpoint directory
// changes at every look (a log written there) says that, and what to do.
func TestSHANoCheckpointSaysNotPaused(t *testing.T) {
	for _, tc := range []struct{ cmd, ckpt, want string }{
		{"for i in 1 2 3 4 5 6 7 8; do echo runall-metric acc=$((i*<n>)); sleep 0.2; done", "every: 50ms, wait: 300ms",
			"could not be paused at step 1: no checkpoint kept"},
		// Looked at every second, it has to hold still for 250 ms to be copied: it never does.
		{"mkdir -p ck/<n>; ( while :; do echo x >> ck/<n>/log; sleep 0.01; done ) & b=$!; " +
			"for i in 1 2 3 4 5 6 7 8; do echo runall-metric acc=$((i*<n>)); sleep 0.5; done; kill $b", "every: 1s, wait: 2s",
			"but never held still to be copied within its wait, 2s (print runall-checkpoint step=N after each save, or keep logs out of it)"},
	} {
		res, out, err := runFile(t, `
config: {max-parallel-commands: 2, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: {method: sha, grace: 1, reduction: 2, max: 4}
    parallel-tasks:
      - name: n=<n>
        matrix: {n: [1, 2]}
        checkpoint: {dir: ck/<n>, `+tc.ckpt+`}
        cmd: '`+tc.cmd+`'
`, Options{Grace: 5 * time.Second})
		if res == nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		for _, r := range res.Tasks {
			said := strings.ReplaceAll(r.Reason, "could not be paused at", "")
			if r.Status == results.StatusPaused || strings.Contains(said, "paused at") {
				t.Errorf("%s: %s (%s): says it paused, and it never could", r.Name, r.Status, r.Reason)
			}
			if r.Status != results.StatusPruned || !strings.Contains(r.Reason, tc.want) {
				t.Errorf("%s: %s (%s), want pruned: %s\n%s", r.Name, r.Status, r.Reason, tc.want, out)
			}
		}
	}
}

// pastRung is a trial of n in 1..4 that reports acc = step·n for 4 steps, 0.4 s each, and
// saves its step after each value (no runall-checkpoint lines). Stopped, it goes on to step 3
// before it exits, so that the copy its pause keeps is past the next rung (step 2).
const pastRung = `      - name: n=<n>
        matrix: {n: [1, 2, 3, 4]}
        checkpoint: {dir: ck/<n>, every: 50ms}
        cmd: |
          stop=0; trap 'stop=1' TERM
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); fi
          while [ $i -lt 4 ]; do
            i=$((i+1)); echo runall-metric acc=$((i*<n>)); sleep 0.1; echo $i > $d/step.tmp; mv $d/step.tmp $d/step
            if [ $stop = 1 ] && [ $i -ge 3 ]; then exit 143; fi
            sleep 0.3
          done
`

// TestKnownValueDecidesWithoutStart (issue 34, rule 3): sha does not resume a trial whose kept
// copy already holds the next rung only to pause it there at once: its value there, known,
// decides the rung without a start; every start is in resumes, and a pause says the step its
// kept copy holds.
func TestKnownValueDecidesWithoutStart(t *testing.T) {
	res, out := runSHA4(t, pastRung)
	got := byName(res)
	for _, r := range res.Tasks {
		if r.Attempts != len(r.Resumes)+1 {
			t.Errorf("%s: %d attempts, %d resumes %+v: want every start after the first in resumes", r.Name, r.Attempts, len(r.Resumes), r.Resumes)
		}
	}
	if n4 := got["n=4"]; n4.Status != results.StatusOK || n4.Attempts != 2 || !slices.Equal(n4.MetricSeries["acc"], []float64{4, 8, 12, 16}) {
		t.Errorf("n=4: %s after %d attempts, acc %v; want ok after one resume, [4 8 12 16]\n%s", n4.Status, n4.Attempts, n4.MetricSeries["acc"], out)
	}
	if n3 := got["n=3"]; n3.Status != results.StatusPruned || n3.Attempts != 1 || !strings.Contains(n3.Reason, "at step 2") {
		t.Errorf("n=3: %s (%s) after %d attempts; want pruned at step 2 without a start\n%s", n3.Status, n3.Reason, n3.Attempts, out)
	}
	// Stopped after step 1, the script goes on to step 3 (4 on a slow machine) before it exits.
	if !regexp.MustCompile(`paused at step [34] \(its kept checkpoint\): sha: its round at step 1`).MatchString(out) {
		t.Errorf("no pause says that it landed at step 3 for the round at step 1\n%s", out)
	}
}

// busyTrial is a trial of n in 1..4 that reports acc = step·n for 6 steps of 0.1 s, saves
// its step after each, and touches a file in its checkpoint directory every 10 ms as it runs
// (a log written there, say): the directory never holds still, so no copy lands before its
// end, which keeps one of step 6. No runall-checkpoint lines.
const busyTrial = `      - name: n=<n>
        matrix: {n: [1, 2, 3, 4]}
        checkpoint: {dir: ck/<n>, every: 50ms}
        cmd: |
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); fi
          ( while :; do echo x >> $d/busy; sleep 0.01; done ) & b=$!
          while [ $i -lt 6 ]; do i=$((i+1)); echo runall-metric acc=$((i*<n>)); echo $i > $d/step; sleep 0.1; done
          kill $b; wait $b 2>/dev/null; exit 0
`

// TestRoundStepReachedWithoutPause (issue 34, rule 3): a trial that reached its round's step
// and ran on to its end before its copy landed (short epochs, a directory that never holds
// still) is decided at that step with its value there, not let through: under pbt the worst
// one is exploited at step 2 (it used to escape, every trial ending ok unexploited); under
// sha the rung prunes. Every start is in resumes, and none is left paused.
func TestRoundStepReachedWithoutPause(t *testing.T) {
	for _, tc := range []struct{ rule, pruned string }{
		{"{method: pbt, interval: 2, max: 6, quantile: 0.25, perturb: [0.8, 1.25], resample: 0}", ""},
		{"{method: sha, grace: 2, reduction: 2, max: 6}", "n=1"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res, out, err := runFile(t, `
config: {max-parallel-commands: 4, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: `+tc.rule+`
    parallel-tasks:
`+busyTrial, Options{Grace: 5 * time.Second})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			noPaused(t, res, out)
			got := byName(res)
			for _, r := range res.Tasks {
				if r.Attempts != len(r.Resumes)+1 {
					t.Errorf("%s: %d attempts, %d resumes: want every start after the first in resumes", r.Name, r.Attempts, len(r.Resumes))
				}
			}
			if tc.pruned == "" {
				if l := got["n=1"].Lineage; len(l) == 0 || l[0].Step != 2 {
					t.Errorf("n=1: lineage %+v; want its exploit at step 2: it reached the round\n%s", l, out)
				}
				return
			}
			if p := got[tc.pruned]; p.Status != results.StatusPruned || !strings.Contains(p.Reason, "at step 2") {
				t.Errorf("%s: %s (%s); want pruned at the rung of step 2\n%s", tc.pruned, p.Status, p.Reason, out)
			}
		})
	}
}

// linedTrial is a trial of n in 1..4 that reports acc = step·n for 6 steps of 0.05 s and
// says each save (runall-checkpoint lines).
const linedTrial = `      - name: n=<n>
        matrix: {n: [1, 2, 3, 4]}
        checkpoint: ck/<n>
        cmd: |
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); fi
          while [ $i -lt 6 ]; do i=$((i+1)); echo runall-metric acc=$((i*<n>)); echo $i > $d/step.tmp; mv $d/step.tmp $d/step; echo runall-checkpoint step=$i; sleep 0.05; done
`

// gracefulTrial is linedTrial whose script, told to stop, saves and exits 0 (as a trainer
// that checkpoints on SIGTERM does): stopped for its round, it has not ended its run.
const gracefulTrial = `      - name: n=<n>
        matrix: {n: [1, 2, 3, 4]}
        checkpoint: ck/<n>
        cmd: |
          stop=0; trap 'stop=1' TERM
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); fi
          while [ $i -lt 6 ]; do i=$((i+1)); echo runall-metric acc=$((i*<n>)); echo $i > $d/step.tmp; mv $d/step.tmp $d/step; echo runall-checkpoint step=$i; sleep 0.05; if [ $stop = 1 ]; then exit 0; fi; done
`

// TestRoundsSweepLeavesNoTrialPaused (issue 34, rule 3): walks the rounds of sha, hyperband
// and pbt over trials that pause where asked (runall-checkpoint lines), trials whose copy
// lands past the round's step, trials that reach their end before any copy lands, and trials
// that exit 0 when stopped (none of them escapes its rounds as if it had run to its end): each
// sweep runs to its end with no trial left paused, every trial ends ok or pruned, and every
// start after a trial's first is in its resumes.
func TestRoundsSweepLeavesNoTrialPaused(t *testing.T) {
	rules := map[string]string{
		"sha":       "{method: sha, grace: 1, reduction: 2, max: 4}",
		"hyperband": "{method: hyperband, grace: 1, reduction: 2, max: 4}",
		"pbt":       "{method: pbt, interval: 1, max: 4, quantile: 0.25, perturb: [0.8, 1.25], resample: 0}",
	}
	trials := map[string]string{"lined": linedTrial, "past its round": pastRung, "ends first": busyTrial, "exits 0 when stopped": gracefulTrial}
	for rname, rule := range rules {
		for tname, trial := range trials {
			t.Run(rname+" "+tname, func(t *testing.T) {
				res, out, err := runFile(t, `
config: {max-parallel-commands: 4, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: `+rule+`
    parallel-tasks:
`+trial, Options{Grace: 5 * time.Second})
				if err != nil {
					t.Fatalf("run: %v\n%s", err, out)
				}
				ok := 0
				// None escapes its rounds: sha and hyperband prune, pbt exploits the worst.
				if rname != "pbt" && !strings.Contains(out, "pruned") {
					t.Errorf("no trial pruned: some escaped their rounds\n%s", out)
				}
				if n1 := byName(res)["n=1"]; rname == "pbt" && len(n1.Lineage) == 0 {
					t.Errorf("n=1, the worst, was never exploited: it escaped its rounds\n%s", out)
				}
				for _, r := range res.Tasks {
					if r.Status != results.StatusOK && r.Status != results.StatusPruned {
						t.Errorf("%s: %s (%s), want ok or pruned", r.Name, r.Status, r.Reason)
					}
					if r.Status == results.StatusOK {
						ok++
					}
					if r.Attempts != len(r.Resumes)+1 {
						t.Errorf("%s: %d attempts, resumes %+v: want every start after the first in resumes", r.Name, r.Attempts, r.Resumes)
					}
				}
				if ok == 0 {
					t.Errorf("no trial ran to its end\n%s", out)
				}
			})
		}
	}
}
