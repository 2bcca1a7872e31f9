package order

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// orderPlan loads a block of five trials a..e with the given block order ("" for the
// default) and a history in which a took 1 s, b 3 s, c 2.8 s (within 10%: a tie, and c needs
// more), d 2 s, e never ran.
func orderPlan(t *testing.T, order string) (*history.History, *plan.Task) {
	t.Helper()
	file := "tasks:\n  - name: sweep\n" + order + "    parallel-tasks:\n" +
		"      - {name: a, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: b, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: c, cmd: 'true', gpu-memory: 8GiB}\n" +
		"      - {name: d, cmd: 'true', gpu-memory: 4GiB}\n" +
		"      - {name: e, cmd: 'true', gpu-memory: 4GiB}\n"
	p := plantest.Load(t, file)
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
	got := names(Trials(block, block.Parallel, h))
	// e has no recorded duration and may be the longest; then by duration, c before b for
	// its larger need.
	if want := []string{"e", "c", "b", "d", "a"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestOrderFileKeepsFileOrder(t *testing.T) {
	for _, how := range []string{"    order: file\n"} {
		h, block := orderPlan(t, how)
		if got, want := names(Trials(block, block.Parallel, h)), []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
			t.Errorf("%q: order %v, want file order %v", how, got, want)
		}
	}
}

func TestOrderConfigFile(t *testing.T) {
	file := "config: {order: file}\ntasks:\n  - name: sweep\n    parallel-tasks:\n      - {name: a, cmd: 'true'}\n      - {name: b, cmd: 'true'}\n"
	p := plantest.Load(t, file)
	if got := p.Tasks[0].Order; got != plan.OrderFile {
		t.Errorf("block order %q, want the config's file", got)
	}
}

// TestAshaOrderShuffled (issue 27, point 3): a block under asha or median starts its trials
// in an order drawn from their identities, not the written one: the same trials written
// worst first or best first start in the same order, which is neither; order: file, on the
// block or in config, keeps the written order; a block under sha keeps longest-first.
func TestAshaOrderShuffled(t *testing.T) {
	load := func(config, block string, values []string) *plan.Task {
		file := config + "tasks:\n  - name: sweep\n" + block + "    parallel-tasks:\n" +
			"      - {name: 'lr=<lr>', cmd: 'train <lr>', matrix: {lr: [" + strings.Join(values, ", ") + "]}}\n"
		p := plantest.Load(t, file)
		return p.Tasks[0]
	}
	worstFirst := []string{"1", "2", "3", "4", "5", "6", "7", "8"}
	bestFirst := slices.Clone(worstFirst)
	slices.Reverse(bestFirst)
	const asha = "    early-stop: {method: asha, metric: acc, mode: max}\n"
	tests := []struct {
		name, config, block string
		want                func(a, b []string) bool
	}{
		{"asha", "", asha, func(a, b []string) bool {
			return slices.Equal(a, b) && !slices.Equal(a, names8(worstFirst)) && !slices.Equal(a, names8(bestFirst))
		}},
		{"median in config", "config: {early-stop: {method: median, metric: acc, mode: max}}\n", "", func(a, b []string) bool { return slices.Equal(a, b) && !slices.Equal(a, names8(worstFirst)) }},
		{"order file", "", asha + "    order: file\n", func(a, b []string) bool {
			return slices.Equal(a, names8(worstFirst)) && slices.Equal(b, names8(bestFirst))
		}},
		{"config order file", "config: {order: file}\n", asha, func(a, b []string) bool { return slices.Equal(a, names8(worstFirst)) }},
		{"no early stop", "", "", func(a, b []string) bool { return slices.Equal(a, names8(worstFirst)) }},
	}
	for _, tc := range tests {
		a, b := load(tc.config, tc.block, worstFirst), load(tc.config, tc.block, bestFirst)
		ga, gb := names(Trials(a, a.Parallel, history.New(""))), names(Trials(b, b.Parallel, history.New("")))
		if !tc.want(ga, gb) {
			t.Errorf("%s: written worst first: %v; best first: %v", tc.name, ga, gb)
		}
	}
}

func names8(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, "lr="+v)
	}
	return out
}
