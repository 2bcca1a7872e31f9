package runner

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAskedValuesNeverRun: the values a sampler hands out reach a trial's command as data,
// bare, in double quotes and in single quotes: each trial gets its value exactly, and
// nothing a value says runs (; $(...) and backticks ran, even inside "<v>", and a quote broke
// the command).
func TestAskedValuesNeverRun(t *testing.T) {
	values := []string{"1; touch pwned", "$(touch pwned)", "`touch pwned`", `a'b"c`, "$HOME", "x && touch pwned #"}
	dir := t.TempDir()
	var lines []string
	for i, v := range values {
		b, _ := json.Marshal(map[string]any{"number": i, "params": map[string]string{"v": v}})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "asks.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, err := runFile(t, fmt.Sprintf(`
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: v <v>
        cmd: |
          cd %[1]q
          printf '%%s' <v> > "bare-$RUNALL_TASK_ID"
          printf '%%s' "<v>" > "double-$RUNALL_TASK_ID"
          printf '%%s' 'v=<v>' > "single-$RUNALL_TASK_ID"
          echo "runall-metric acc=1"
        search:
          ask: 'n=$(flock asked.lock sh -c "n=\$(cat asked 2>/dev/null || echo 0); echo \$((n+1)) > asked; echo \$n"); sed -n "$((n+1))p" %[1]q/asks.jsonl'
          tell: 'true'
        trials: %[2]d
`, dir, len(values)), Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Errorf("a value ran as a command\n%s", out)
	}
	for _, how := range []string{"bare", "double", "single"} {
		files, _ := filepath.Glob(filepath.Join(dir, how+"-*"))
		var got []string
		for _, f := range files {
			b, _ := os.ReadFile(f)
			got = append(got, strings.TrimPrefix(string(b), "v="))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(values))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the trials got %q, want %q", how, got, want)
		}
	}
}

// span is when a sampler command ran.
type span struct{ from, to float64 }

// readSpans reads the log TestSearchAsksAtOnce's commands write: "ask FROM TO", "tell FROM
// TO", "trial START X".
func readSpans(log string) (asks, tells []span, starts []float64) {
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		var kind string
		var a, z float64
		fmt.Sscan(l, &kind, &a, &z)
		switch kind {
		case "ask":
			asks = append(asks, span{a, z})
		case "tell":
			tells = append(tells, span{a, z})
		case "trial":
			starts = append(starts, a)
		}
	}
	return asks, tells, starts
}

// TestSearchAsksAtOnce: with room for several trials, their asks run at once, each trial
// starts as soon as its own ask returns (the first batch waited for every ask: 8 slots and a
// 3 s ask started the first trial 24 s in), and asks are not held behind tells (with 4-5 s
// trials the sweep fell to one trial at a time). The first ask runs alone: it may create the
// sampler's storage (Optuna's SQLite schema, which concurrent first asks raced to create).
// Each trial's results name its log file.
func TestSearchAsksAtOnce(t *testing.T) {
	dir := t.TempDir()
	res, out, err := runFile(t, fmt.Sprintf(`
config:
  max-parallel-commands: 4
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: x=<x>
        cmd: echo "trial $(date +%%s.%%N) <x>" >> %[1]q/log; echo "runall-metric acc=<x>"
        trials: 8
        search:
          ask: |
            n=$(flock asked.lock sh -c "n=\$(cat asked 2>/dev/null || echo 0); echo \$((n+1)) > asked; echo \$n")
            s=$(date +%%s.%%N); sleep 0.$((n %% 4 * 3 + 1)); echo "ask $s $(date +%%s.%%N)" >> %[1]q/log
            echo "{\"number\": $n, \"params\": {\"x\": \"$n\"}}"
          tell: s=$(date +%%s.%%N); sleep 2; echo "tell $s $(date +%%s.%%N)" >> %[1]q/log
`, dir), Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	asks, tells, starts := readSpans(string(b))
	overlap := func(xs, ys []span) bool {
		for i, x := range xs {
			for j, y := range ys {
				if (&xs[0] != &ys[0] || i != j) && x.from < y.to && y.from < x.to {
					return true
				}
			}
		}
		return false
	}
	startedDuringAsk := slices.ContainsFunc(starts, func(s float64) bool {
		return slices.ContainsFunc(asks, func(a span) bool { return a.from < s && s < a.to })
	})
	if len(asks) == 0 {
		t.Fatalf("no ask ran\n%s\n%s", b, out)
	}
	first := slices.MinFunc(asks, func(x, y span) int { return cmp.Compare(x.from, y.from) })
	if slices.ContainsFunc(asks, func(a span) bool { return a != first && a.from < first.to }) {
		t.Errorf("an ask started before the first returned (it may create the sampler's storage)\n%s", b)
	}
	if len(asks) != 8 || !overlap(asks, asks) || !startedDuringAsk || !overlap(asks, tells) {
		t.Errorf("%d asks; asks at once: %v; a trial started while an ask ran: %v; an ask while a tell ran: %v\n%s",
			len(asks), overlap(asks, asks), startedDuringAsk, overlap(asks, tells), b)
	}
	for _, tr := range res.Tasks {
		if _, err := os.Stat(tr.LogFile); tr.Status == "ok" && err != nil {
			t.Errorf("%s: log file %q: %v", tr.Name, tr.LogFile, err)
		}
	}
}
