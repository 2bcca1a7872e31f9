package earlystop

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// learning is a made-up learning curve: trial i approaches its own ceiling at its own pace, so
// that the best at step 1 is not the best at the end.
func learning(params []Param, step int) float64 {
	lr, _ := strconv.ParseFloat(paramValue(params, "lr"), 64)
	width, _ := strconv.ParseFloat(paramValue(params, "width"), 64)
	ceiling := 0.6 + 0.35*math.Exp(-math.Pow(math.Log10(lr)+2, 2)) + 0.02*math.Log2(width)/7
	pace := 1 - math.Exp(-lr*30*float64(step))
	return ceiling * pace
}

func paramValue(ps []Param, name string) string {
	for _, p := range ps {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// grid27 is 27 trials, as a matrix writes them: the worst learning rate first.
func grid27() []Member {
	var out []Member
	for _, lr := range []string{"0.0001", "0.001", "0.01"} {
		for _, w := range []string{"8", "32", "128"} {
			for _, seed := range []string{"1", "2", "3"} {
				ps := []Param{{"lr", lr}, {"width", w}, {"seed", seed}}
				out = append(out, Member{Key: "k-" + lr + "-" + w + "-" + seed, Params: ps})
			}
		}
	}
	return out
}

// outcome is what a simulated sweep ends with: each trial's status and last value.
type outcome map[string]string

// simulate runs members under r with `slots` trials at once, offered in the given order: a
// trial told to run goes to its round's step (or to `steps`), reports its value there and
// pauses; the board decides the rest. It returns each trial's end and the board.
func simulate(t *testing.T, r *Rounds, members []Member, order []int, slots, steps int) (outcome, Board) {
	t.Helper()
	b := Board{Values: map[int]map[string]float64{}, Ended: map[string]bool{}}
	end := outcome{}
	for turn := 0; turn < 10000; turn++ {
		var batch []Member
		for _, i := range order {
			m := members[i]
			if _, done := end[m.Key]; done {
				continue
			}
			a := r.Action(b, m.Key)
			switch a.Do {
			case Drop:
				end[m.Key] = "pruned: " + a.Reason
				continue
			case Run:
				if len(batch) < slots {
					batch = append(batch, m)
				}
			}
		}
		if len(batch) == 0 {
			if len(end) != len(members) {
				t.Fatalf("turn %d: no trial can run, %d of %d ended", turn, len(end), len(members))
			}
			return end, b
		}
		for _, m := range batch {
			a := r.Action(b, m.Key)
			until := a.Until
			if until == 0 {
				until = steps
			}
			v := learning(a.Params, until)
			if a.Until == 0 {
				b.Ended[m.Key] = true
				end[m.Key] = fmt.Sprintf("ok %.4f", v)
				continue
			}
			if b.Values[until] == nil {
				b.Values[until] = map[string]float64{}
			}
			b.Values[until][m.Key] = v
		}
	}
	t.Fatal("the sweep did not end")
	return nil, b
}

func orders(n int) map[string][]int {
	written := make([]int, n)
	for i := range written {
		written[i] = i
	}
	reversed := slices.Clone(written)
	slices.Reverse(reversed)
	shuffled := slices.Clone(written)
	rand.New(rand.NewPCG(7, 9)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return map[string][]int{"written": written, "reversed": reversed, "shuffled": shuffled}
}

// TestSHAOrderFree is point 3 of issue 27: synchronous successive halving and hyperband
// decide the same whatever order the trials are written or offered in, and however many run
// at once (one runall or many); sha keeps the best 1/reduction at each rung.
func TestSHAOrderFree(t *testing.T) {
	tests := []struct {
		c        Config
		finished int // trials that run to the end
	}{
		{Config{Method: SHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3, Max: 27}, 1},
		{Config{Method: SHA, Metric: "acc", Mode: "max", Grace: 3, Reduction: 3, Max: 27}, 3},
		{Config{Method: SHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3}, 1},
		{Config{Method: Hyperband, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3, Max: 27}, 5}, // brackets of 15, 7, 3 and 2: 1+1+1+2
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s-grace%d-max%d", tc.c.Method, tc.c.Grace, tc.c.Max), func(t *testing.T) {
			var first outcome
			for name, order := range orders(27) {
				for _, slots := range []int{1, 4, 27} {
					members := grid27()
					r, err := NewRounds(tc.c, "block", members, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := simulate(t, r, members, order, slots, 27)
					if first == nil {
						first = got
					} else if !maps.Equal(first, got) {
						t.Fatalf("order %s, %d at once: outcome differs:\n%v\nwant\n%v", name, slots, got, first)
					}
				}
			}
			finished := 0
			for _, s := range first {
				if strings.HasPrefix(s, "ok") {
					finished++
				}
			}
			if finished != tc.finished {
				t.Errorf("%d trials ran to the end, want %d: %v", finished, tc.finished, first)
			}
		})
	}
}

// TestSHAKeepsTheBest: at each rung the best max(1, n/reduction) go on; the rest are pruned
// with a reason that names their value, the rung and the bar.
func TestSHAKeepsTheBest(t *testing.T) {
	c := Config{Method: SHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3, Max: 9}
	var members []Member
	for i := range 9 {
		members = append(members, Member{Key: fmt.Sprint("t", i)})
	}
	r, _ := NewRounds(c, "b", members, nil)
	b := Board{Values: map[int]map[string]float64{1: {}}, Ended: map[string]bool{}}
	for i := range 8 {
		b.Values[1][fmt.Sprint("t", i)] = float64(i) / 10
	}
	if a := r.Action(b, "t0"); a.Do != Wait || !strings.Contains(a.Reason, "until 1 other of its bracket's 9 trials") {
		t.Fatalf("t0 before the rung is full: %+v", a)
	}
	if a := r.Action(b, "t8"); a.Do != Run || a.Until != 1 {
		t.Fatalf("t8, not at the rung yet: %+v, want run until 1", a)
	}
	b.Values[1]["t8"] = 0.05 // ties nobody
	want := map[string]Action{
		"t7": {Do: Run, Until: 3}, "t6": {Do: Run, Until: 3}, "t5": {Do: Run, Until: 3},
		"t4": {Do: Drop, Reason: "sha: acc 0.4 at step 1 is not among the best 3 of the 9 trials of its bracket there (0.5 and better continue)"},
		"t8": {Do: Drop, Reason: "sha: acc 0.05 at step 1 is not among the best 3 of the 9 trials of its bracket there (0.5 and better continue)"},
	}
	for k, w := range want {
		if a := r.Action(b, k); a.Do != w.Do || a.Until != w.Until || a.Reason != w.Reason {
			t.Errorf("%s: %+v, want %+v", k, a, w)
		}
	}
	b.Values[3] = map[string]float64{"t5": 0.9, "t7": 0.7}
	b.Ended["t6"] = true // failed before rung 3: the rung goes on without it
	if a := r.Action(b, "t5"); a.Do != Run || a.Until != 0 {
		t.Errorf("t5, the best at the last rung: %+v, want run to its end", a)
	}
	if a := r.Action(b, "t7"); a.Do != Drop {
		t.Errorf("t7: %+v, want dropped", a)
	}
}

// TestHyperbandBrackets: the brackets of the paper, the trials split in proportion, each
// trial in the same bracket whatever order the members come in.
func TestHyperbandBrackets(t *testing.T) {
	c := Config{Method: Hyperband, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3, Max: 27}
	shapes := c.Brackets()
	want := []BracketShape{{1, 27}, {3, 12}, {9, 6}, {27, 4}}
	if !slices.Equal(shapes, want) {
		t.Fatalf("brackets %v, want %v", shapes, want)
	}
	if got := Split(shapes, 27); !slices.Equal(got, []int{15, 7, 3, 2}) {
		t.Errorf("27 trials split %v, want [15 7 3 2]", got)
	}
	if got := Split(shapes, 2); got[0]+got[1]+got[2]+got[3] != 2 {
		t.Errorf("2 trials split %v", got)
	}
	members := grid27()
	r1, _ := NewRounds(c, "block", members, nil)
	slices.Reverse(members)
	r2, _ := NewRounds(c, "block", members, nil)
	for _, m := range members {
		b1, s1 := r1.Bracket(m.Key)
		b2, s2 := r2.Bracket(m.Key)
		if b1 != b2 || !slices.Equal(s1, s2) {
			t.Errorf("%s: bracket %d %v, then %d %v", m.Key, b1, s1, b2, s2)
		}
	}
	if _, steps := r1.Bracket(members[0].Key); len(steps) > 0 && steps[0] < 1 {
		t.Errorf("rounds %v", steps)
	}
}

// TestSchedule holds the plan check prints against the rule itself: the simulated sweep runs
// as many steps and starts as the plan says.
func TestSchedule(t *testing.T) {
	tests := []struct {
		c            Config
		steps, start int
	}{
		{Config{Method: SHA, Mode: "max", Grace: 1, Reduction: 3, Max: 27}, 27 + 9*2 + 3*6 + 1*18, 27 + 9 + 3 + 1},
		{Config{Method: PBT, Mode: "max", Max: 27, Population: Population{Interval: 9}}, 27 * 27, 27 * 3},
		{Config{Method: Hyperband, Mode: "max", Grace: 1, Reduction: 3, Max: 27}, 0, 0},
	}
	for _, tc := range tests {
		members := grid27()
		r, _ := NewRounds(tc.c, "block", members, pbtSpace())
		steps, starts := 0, 0
		counting := map[string]int{}
		b := Board{Values: map[int]map[string]float64{}, Ended: map[string]bool{}}
		for range 100 {
			ran := false
			for _, m := range members {
				a := r.Action(b, m.Key)
				if a.Do != Run || b.Ended[m.Key] {
					continue
				}
				ran = true
				starts++
				until := a.Until
				if until == 0 {
					until = 27
					b.Ended[m.Key] = true
				} else {
					if b.Values[until] == nil {
						b.Values[until] = map[string]float64{}
					}
					b.Values[until][m.Key] = learning(a.Params, until)
				}
				steps += until - counting[m.Key]
				counting[m.Key] = until
			}
			if !ran {
				break
			}
		}
		wantSteps, wantStarts := 0, 0
		for _, p := range tc.c.Schedule(27) {
			wantSteps += p.Steps
			wantStarts += p.Starts
		}
		if steps != wantSteps || starts != wantStarts {
			t.Errorf("%s: the sweep ran %d steps in %d starts; Schedule says %d in %d", tc.c.Method, steps, starts, wantSteps, wantStarts)
		}
		if tc.steps > 0 && (steps != tc.steps || starts != tc.start) {
			t.Errorf("%s: %d steps in %d starts, want %d in %d", tc.c.Method, steps, starts, tc.steps, tc.start)
		}
	}
}
