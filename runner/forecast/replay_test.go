package forecast

import (
	"bufio"
	"cmp"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/runner/earlystop"
)

// TestReplayCurves replays learning curves through the rule, 4 trials at a time, with the
// freeze-thaw's policy as runner/prune has it (held at grace without an informed forecast
// while trials wait or others are held so, then one per free slot, the best value first; paused below
// pause-below), and logs the epochs trained and the best value reached at max, for the
// written order (RUNALL_CURVES_SORT=1: worst first by the end), a shuffled one and the
// reverse (RUNALL_CURVES_GRACE: the rule's grace, 2 by default; RUNALL_CURVES_V=1: where each
// trial ended, and how). RUNALL_CURVES is a file of lines "set name v1 v2 ...", as the curves benchmark's
// trials print them (docs/benchmarks.md): a quick look at a setting of the reference model
// before the benchmark, which runs the real scheduler. Skipped without it.
func TestReplayCurves(t *testing.T) {
	path := os.Getenv("RUNALL_CURVES")
	if path == "" {
		t.Skip("RUNALL_CURVES not set")
	}
	names, curves := readCurves(t, path)
	if os.Getenv("RUNALL_CURVES_SORT") != "" {
		slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(curves[a][len(curves[a])-1], curves[b][len(curves[b])-1]) })
	}
	shuffled := slices.Clone(names)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	for _, o := range []struct {
		name  string
		order []string
	}{{"written", names}, {"shuffled", shuffled}, {"reversed", reversed}} {
		for _, md := range []float64{0, 0.005} {
			rp := newReplay(t, o.order, curves, md)
			rp.run()
			t.Logf("%-9s min-delta %.3f: %d epochs, best %.4f", o.name, md, rp.epochs, rp.best())
			if os.Getenv("RUNALL_CURVES_V") != "" {
				for _, x := range rp.trials {
					t.Logf("  %-26s %-7s %2d %.4f", x.name, x.state, x.step, curves[x.name][len(curves[x.name])-1])
				}
			}
		}
	}
}

func readCurves(t *testing.T, path string) ([]string, map[string][]float64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	curves := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		for _, x := range fs[min(2, len(fs)):] {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				t.Fatal(err)
			}
			curves[fs[1]] = append(curves[fs[1]], v)
		}
		if len(fs) > 2 {
			names = append(names, fs[1])
		}
	}
	return names, curves
}

// replayed is one trial of a replay.
type replayed struct {
	name               string
	step               int
	state              string // waiting, running, paused, stopped or done
	chance, at, value  float64
	uncertain, resumed bool
}

type replay struct {
	r       *Rule
	trials  []*replayed
	curves  map[string][]float64
	epochs  int
	started int
	max     int
}

func newReplay(t *testing.T, order []string, curves map[string][]float64, minDelta float64) *replay {
	n := len(curves[order[0]])
	r, err := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: replayGrace(), Max: n, MinDelta: minDelta}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp := &replay{r: r, curves: curves, max: n}
	for _, name := range order {
		rp.trials = append(rp.trials, &replayed{name: name, state: "waiting"})
	}
	return rp
}

func (rp *replay) count(state string) int {
	n := 0
	for _, x := range rp.trials {
		if x.state == state {
			n++
		}
	}
	return n
}

func (rp *replay) run() {
	for rp.fill(); rp.count("running") > 0; rp.fill() {
		for _, x := range rp.trials {
			if x.state == "running" {
				rp.advance(x)
			}
		}
	}
}

// advance trains x one epoch and decides it.
func (rp *replay) advance(x *replayed) {
	x.step++
	rp.epochs++
	x.value = rp.curves[x.name][x.step-1]
	d, _ := rp.r.Observe(x.name, x.step, x.value)
	waiting := rp.started < len(rp.trials)
	switch f := d.Forecast; {
	case d.Stop:
		x.state = "stopped"
	case x.step == rp.max:
		x.state = "done"
	case x.resumed || (!waiting && !rp.heldUncertain()):
	case x.step == rp.r.c.Grace && (f == nil || !f.Informed):
		x.state, x.uncertain, x.chance = "paused", true, 1
	case f != nil && f.HasIncumbent && f.Chance < earlystop.DefaultPauseBelow:
		x.state, x.chance, x.at = "paused", f.Chance, f.Chance
	}
}

// fill gives free slots to paused and waiting trials as runner/prune's thaw does.
func (rp *replay) fill() {
	for rp.count("running") < 4 {
		paused := rp.paused()
		if rp.started < len(rp.trials) {
			if len(paused) > 0 && !paused[0].uncertain && paused[0].chance > 1/float64(rp.started+1) {
				paused[0].state, paused[0].resumed = "running", true
				continue
			}
			i := slices.IndexFunc(rp.trials, func(x *replayed) bool { return x.state == "waiting" })
			rp.trials[i].state = "running"
			rp.started++
			continue
		}
		if len(paused) == 0 {
			return
		}
		x := paused[0]
		x.state, x.resumed = "running", true
		if !x.uncertain && x.chance <= x.at {
			x.state = "stopped"
		}
	}
}

// paused are the paused trials, their chances asked again (those below min-chance end),
// in the order the thaw resumes them.
func (rp *replay) paused() []*replayed {
	var out []*replayed
	for _, x := range rp.trials {
		if x.state != "paused" {
			continue
		}
		if c, ok := rp.r.Chance(x.name); ok {
			x.chance = c
		}
		if x.chance < rp.r.c.MinChance {
			x.state = "stopped"
			continue
		}
		out = append(out, x)
	}
	slices.SortStableFunc(out, func(a, b *replayed) int {
		if a.uncertain != b.uncertain {
			return map[bool]int{true: 1, false: -1}[a.uncertain]
		}
		if a.uncertain {
			return cmp.Compare(b.value, a.value)
		}
		return cmp.Compare(b.chance, a.chance)
	})
	return out
}

func (rp *replay) best() float64 {
	best := 0.0
	for _, x := range rp.trials {
		if x.state == "done" {
			best = max(best, rp.curves[x.name][rp.max-1])
		}
	}
	return best
}

// replayGrace is RUNALL_CURVES_GRACE, 2 by default (the curves benchmark's).
func replayGrace() int {
	if g, err := strconv.Atoi(os.Getenv("RUNALL_CURVES_GRACE")); err == nil {
		return g
	}
	return 2
}

// heldUncertain reports whether a trial is held at grace for want of an informed forecast.
func (rp *replay) heldUncertain() bool {
	for _, x := range rp.trials {
		if x.state == "paused" && x.uncertain {
			return true
		}
	}
	return false
}
