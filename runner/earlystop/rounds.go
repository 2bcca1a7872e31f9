package earlystop

// The synchronous rules (sha, hyperband, pbt) run a block's trials in rounds. Every trial of
// a bracket runs to the round's step and pauses there, at its checkpoint; once each one has
// its value there (or has ended for good), the rule decides who goes on: sha the best
// 1/reduction, the rest pruned; pbt every one, the worst from a copy of a better one's
// checkpoint with new values. Then those resume, to the next round's step.
//
//	round k:  run to step s_k ─▶ value at s_k ─▶ paused (its checkpoint has landed)
//	              ▲                                       │ every trial of the bracket there
//	              └──── resumed (pbt: maybe another's ◀── decide
//	                    checkpoint, new values)           └─▶ dropped: pruned (sha)
//
// What the rule decides is a pure function of the Board, the values recorded at the rounds'
// steps and the trials that ended, replayed from the first round on: every runall of a sweep
// that shares the board (--claims) decides the same, whatever order the trials came in and
// whichever runall ran them. Ties go to the trial whose key sorts first.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Board is what a synchronous rule decides from.
type Board struct {
	// Values are the trials' values at the rounds' steps: by step, by trial key.
	Values map[int]map[string]float64
	// Ended are the trials that ended for good (finished, failed, stopped): a round they
	// have no value at does not wait for them. Whatever they did before still counts, so
	// that the rounds decided before they ended are replayed as they were decided.
	Ended map[string]bool
}

// value is trial's value at step, if it reported one there.
func (b Board) value(step int, trial string) (float64, bool) {
	v, ok := b.Values[step][trial]
	return v, ok
}

// Do is what a trial does next under a synchronous rule.
type Do int

const (
	Run  Do = iota // run (or resume) to Until, then pause; to its end when Until is 0
	Wait           // paused at a round that is not decided yet
	Drop           // out: pruned at a round (sha, hyperband)
)

// Action is what a synchronous rule says a trial does now.
type Action struct {
	Do     Do
	Until  int    // Run: the round's step it pauses at; 0: it runs to its end
	Reason string // Drop: why it is out; Wait: what it waits for
	// Params are the values it runs with (pbt: as explored at its last exploit; else its own).
	Params []Param
	// From is the pbt exploit it resumes from (nil: its own checkpoint, or none yet).
	From *Exploit
}

// Param is one hyperparameter of a trial: a matrix or sample key and its value.
type Param struct{ Name, Value string }

// Exploit is one step of a pbt trial's lineage: at Step it continued from a copy of From's
// checkpoint, with Params (From's values, perturbed or drawn again).
type Exploit struct {
	Step   int
	From   string  // the trial whose checkpoint it continued from
	Value  float64 // its own value at Step, which put it in the bottom quantile
	Params []Param
}

// Member is one trial of a block under a synchronous rule.
type Member struct {
	Key    string  // its identity, the same on every runall
	Params []Param // its values as the task file made them
}

// Rounds is a block's synchronous rule: its brackets, their rounds, and its decisions.
type Rounds struct {
	c        Config
	seed     string // the block's identity: the same brackets and draws everywhere
	members  map[string]Member
	brackets []bracket
	of       map[string]int // each trial's bracket
	space    []Axis         // pbt: the values it explores
}

// bracket is a set of trials that run in the same rounds.
type bracket struct {
	trials []string // sorted
	steps  []int    // the rounds' steps
}

// NewRounds is the synchronous rule c names (sha, hyperband or pbt) over a block's trials;
// block is the block's identity, which seeds hyperband's brackets and pbt's draws.
func NewRounds(c Config, block string, members []Member, space []Axis) (*Rounds, error) {
	if c.Mode != "max" && c.Mode != "min" {
		return nil, fmt.Errorf("early-stop: mode %q: want max or min", c.Mode)
	}
	c = c.withDefaults()
	r := &Rounds{c: c, seed: block, members: map[string]Member{}, of: map[string]int{}, space: space}
	keys := make([]string, 0, len(members))
	for _, m := range members {
		r.members[m.Key] = m
		keys = append(keys, m.Key)
	}
	slices.Sort(keys)
	switch c.Method {
	case SHA, PBT:
		r.brackets = []bracket{{trials: keys, steps: c.roundSteps(c.Grace)}}
	case Hyperband:
		r.brackets = c.hyperbandBrackets(block, keys)
	default:
		return nil, fmt.Errorf("early-stop: method %q is not a synchronous rule: want sha, hyperband or pbt", c.Method)
	}
	for i, b := range r.brackets {
		for _, k := range b.trials {
			r.of[k] = i
		}
	}
	return r, nil
}

// roundSteps are the steps of a bracket's rounds, from first: sha's rungs first·reduction^k,
// pbt's multiples of interval; below max when set.
func (c Config) roundSteps(first int) []int {
	if c.Method == PBT {
		var out []int
		for step := c.Population.Interval; len(out) < maxRounds && (c.Max == 0 || step < c.Max); step += c.Population.Interval {
			out = append(out, step)
		}
		return out
	}
	return Config{Grace: first, Reduction: c.Reduction, Max: c.Max}.Rungs()
}

// maxRounds bounds pbt's rounds without max.
const maxRounds = 10000

// Bracket is the bracket trial runs in (0 but for hyperband), and the steps of its rounds.
func (r *Rounds) Bracket(trial string) (int, []int) {
	i := r.of[trial]
	return i, r.brackets[i].steps
}

// Action is what trial does now, given what the board holds.
func (r *Rounds) Action(b Board, trial string) Action {
	i, ok := r.of[trial]
	if !ok {
		return Action{Do: Run, Params: nil}
	}
	s := r.replay(b, r.brackets[i], trial)
	return s.action
}

// Lineage is trial's pbt exploits so far, in order.
func (r *Rounds) Lineage(b Board, trial string) []Exploit {
	i, ok := r.of[trial]
	if !ok {
		return nil
	}
	return r.replay(b, r.brackets[i], trial).lineage
}

// replayed is one trial's way through its bracket's rounds as the board has them.
type replayed struct {
	action  Action
	lineage []Exploit
}

// state is a bracket's trials between two rounds: who is in, with which values.
type state struct {
	alive  []string           // sorted
	params map[string][]Param // pbt: each trial's values now
	from   map[string]*Exploit
	out    map[string]string // dropped trials: why
}

// replay plays the bracket's decided rounds, and says where trial stands.
func (r *Rounds) replay(b Board, br bracket, trial string) replayed {
	st := state{alive: br.trials, params: map[string][]Param{}, from: map[string]*Exploit{}, out: map[string]string{}}
	for _, k := range br.trials {
		st.params[k] = r.members[k].Params
	}
	var lineage []Exploit
	for k, step := range br.steps {
		if !slices.Contains(st.alive, trial) {
			break
		}
		if len(st.alive) == 1 && r.c.Method != PBT {
			break // the last one of its bracket: nothing left to compare it with
		}
		missing := r.missing(b, st.alive, step)
		if len(missing) > 0 {
			return replayed{r.waitOrRun(b, st, trial, step, k, missing), lineage}
		}
		st = r.decide(b, st, step)
		if e := st.from[trial]; e != nil && e.Step == step {
			lineage = append(lineage, *e)
		}
	}
	if why, dropped := st.out[trial]; dropped {
		return replayed{Action{Do: Drop, Reason: why}, lineage}
	}
	return replayed{Action{Do: Run, Params: st.params[trial], From: st.from[trial]}, lineage}
}

// missing are the trials of alive with no value at step that have not ended either.
func (r *Rounds) missing(b Board, alive []string, step int) []string {
	var out []string
	for _, k := range alive {
		if _, ok := b.value(step, k); !ok && !b.Ended[k] {
			out = append(out, k)
		}
	}
	return out
}

// waitOrRun is trial's action at an undecided round: run to its step, or wait there for
// the others.
func (r *Rounds) waitOrRun(b Board, st state, trial string, step, k int, missing []string) Action {
	if slices.Contains(missing, trial) {
		return Action{Do: Run, Until: step, Params: st.params[trial], From: st.from[trial]}
	}
	return Action{Do: Wait, Params: st.params[trial], From: st.from[trial],
		Reason: fmt.Sprintf("%s: paused at step %d (round %d) until %s of its bracket's %d trials get there",
			r.c.Method, step, k+1, plural(len(missing), "other"), len(st.alive))}
}

// decide plays a round whose values are all in.
func (r *Rounds) decide(b Board, st state, step int) state {
	ranked := r.rank(b, st.alive, step)
	if r.c.Method == PBT {
		return r.exploit(b, st, ranked, step)
	}
	keep := max(1, len(ranked)/r.c.Reduction)
	next := state{params: st.params, from: st.from, out: st.out}
	for i, k := range ranked {
		if i < keep {
			next.alive = append(next.alive, k) // one that has ended since is not waited for
			continue
		}
		v, _ := b.value(step, k)
		next.out[k] = fmt.Sprintf("%s: %s %s at step %d is not among the best %d of the %d trials of its bracket there (%s and better continue)",
			r.c.Method, r.c.Metric, num(v), step, keep, len(ranked), num(r.at(b, step, ranked[keep-1])))
	}
	slices.Sort(next.alive)
	return next
}

// rank orders the trials of alive with a value at step, best first (nan last, ties by key).
func (r *Rounds) rank(b Board, alive []string, step int) []string {
	var out []string
	for _, k := range alive {
		if _, ok := b.value(step, k); ok {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(x, y string) int {
		vx, vy := r.at(b, step, x), r.at(b, step, y)
		switch {
		case math.IsNaN(vx) != math.IsNaN(vy):
			if math.IsNaN(vx) {
				return 1
			}
			return -1
		case better(r.c.Mode, vx, vy):
			return -1
		case better(r.c.Mode, vy, vx):
			return 1
		}
		return cmp.Compare(x, y)
	})
	return out
}

func (r *Rounds) at(b Board, step int, trial string) float64 {
	v, _ := b.value(step, trial)
	return v
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
