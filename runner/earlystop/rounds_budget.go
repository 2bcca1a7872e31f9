package earlystop

// What a synchronous rule costs, for runall check: how many trials each round of each
// bracket holds, and the steps and starts they take in all, against every trial run to its
// end. Synchronous, the counts are exact for trials that all reach every round they are
// due at (none fails or ends early).

// BracketPlan is one bracket's rounds.
type BracketPlan struct {
	Trials int         // the trials it starts
	Rounds []RoundPlan // its rounds, in order
	Last   int         // the trials that run past its last round to their end
	Steps  int         // the steps its trials run in all (with max; else 0)
	Starts int         // how often its trials start: once, and again after each round they pass
}

// RoundPlan is one round: its step, and how many trials pause there.
type RoundPlan struct{ Step, Trials int }

// Schedule is the plan of a synchronous rule over n trials, bracket by bracket.
func (c Config) Schedule(n int) []BracketPlan {
	c = c.withDefaults()
	shapes := c.Brackets()
	var out []BracketPlan
	for i, m := range Split(shapes, n) {
		if m > 0 {
			out = append(out, c.bracketPlan(m, c.roundSteps(shapes[i].First)))
		}
	}
	return out
}

func (c Config) bracketPlan(n int, steps []int) BracketPlan {
	p := BracketPlan{Trials: n, Starts: n}
	alive, ran := n, 0
	for _, step := range steps {
		if alive == 1 && c.Method != PBT {
			break // the last one of its bracket runs on without pausing
		}
		p.Rounds = append(p.Rounds, RoundPlan{step, alive})
		p.Steps += alive * (step - ran)
		ran = step
		if c.Method != PBT {
			alive = max(1, alive/c.Reduction)
		}
		p.Starts += alive
	}
	p.Last = alive
	if c.Max > 0 {
		p.Steps += alive * (c.Max - ran)
	} else {
		p.Steps = 0
	}
	return p
}
