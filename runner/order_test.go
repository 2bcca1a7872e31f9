package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// orderPlan loads a block of five trials a..e with the given block order ("" for the
// default) and a history in which a took 1 s, b 3 s, c 2.8 s (within 10%: a tie, and c needs
// more), d 2 s, e never ran.
func orderPlan(t *testing.T, order string) (*history.History, *plan.Task) {
	t.Helper()
	dir := t.TempDir()
	file := "tasks:\n  - name: sweep\n" + order + "    parallel-tasks:\n" +
		"      - {name: a, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: b, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: c, cmd: 'true', gpu-memory: 8GiB}\n" +
		"      - {name: d, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: e, cmd: 'true', gpu-memory: 4GiB}\n"
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	block := p.Tasks[0]
	took := map[string]time.Duration{"a": time.Second, "b": 3 * time.Second, "c": 2800 * time.Millisecond, "d": 2 * time.Second}
	h := history.New("")
	res := &results.Run{}
	byID := map[int]*plan.Task{}
	t0 := time.Now()
	for _, tr := range block.Parallel {
		if d, ok := took[tr.Name]; ok {
			res.Tasks = append(res.Tasks, results.Task{ID: tr.ID, Name: tr.Name, Status: results.StatusOK, StartedAt: t0, FinishedAt: t0.Add(d)})
			byID[tr.ID] = tr
		}
	}
	h.Record(res, byID)
	return h, block
}

func names(ts []*plan.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestOrderLongestFirst(t *testing.T) {
	h, block := orderPlan(t, "")
	got := names(orderTrials(block, block.Parallel, h))
	// e has no recorded duration and may be the longest; then by duration, c before b for
	// its larger need.
	if want := []string{"e", "c", "b", "d", "a"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestOrderFileKeepsFileOrder(t *testing.T) {
	for _, how := range []string{"    order: file\n"} {
		h, block := orderPlan(t, how)
		if got, want := names(orderTrials(block, block.Parallel, h)), []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
			t.Errorf("%q: order %v, want file order %v", how, got, want)
		}
	}
}

func TestOrderConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := "config: {order: file}\ntasks:\n  - name: sweep\n    parallel-tasks:\n      - {name: a, cmd: 'true'}\n      - {name: b, cmd: 'true'}\n"
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tasks[0].Order; got != plan.OrderFile {
		t.Errorf("block order %q, want the config's file", got)
	}
}

// A large trial first in line is overtaken by smaller ones that fit, but at most
// max-parallel-commands times; then it holds the line until it fits.
func TestRunBoundedWaiting(t *testing.T) {
	const limit = 3
	res, out, err := runFile(t, `
config: {max-parallel-commands: 3, order: file}
tasks:
  - name: sweep
    parallel-tasks:
      - name: first
        gpu-memory: 3GiB
        cmd: `+fakeAlloc("3GiB", "1s")+`
      - name: big
        gpu-memory: 8GiB
        cmd: `+fakeAlloc("8GiB", "100ms")+`
      - name: small<replace>
        gpu-memory: 3GiB
        cmd: `+fakeAlloc("3GiB", "300ms")+`
        for-each: [1, 2, 3, 4, 5, 6, 7, 8]
`, Options{Resources: ResourceOptions{Probe: fakeGPUs(t, 10<<30)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	big := byName(res)["big"]
	overtook := 0
	for _, r := range res.Tasks {
		if r.Name != "first" && r.Name != "big" && r.StartedAt.Before(big.StartedAt) {
			overtook++
		}
	}
	if overtook == 0 || overtook > limit {
		t.Errorf("big was overtaken %d times, want 1 to %d (a bounded number)\n%s", overtook, limit, out)
	}
	if big.PassedOver != overtook {
		t.Errorf("big's result says it was passed over %d times; %d trials behind it started first", big.PassedOver, overtook)
	}
}
