package earlystop

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Axis is one key of a block's space, as pbt explores it: the plan knows what its values
// are (a matrix key's list, a sample distribution), the rule only when to draw and perturb.
type Axis interface {
	// Name is the key, as its placeholder names it (<lr>).
	Name() string
	// Draw is the value at u, in [0, 1): drawing the key again from its space.
	Draw(u float64) string
	// Perturb is value multiplied by factor, kept within the space (a list's neighbour for
	// a list); false when value cannot be perturbed (not a number of the space).
	Perturb(value string, factor float64) (string, bool)
}

// exploit plays a pbt round whose values are all in: each trial of the bottom quantile
// continues from a copy of a trial of the top quantile (drawn), with its values explored.
func (r *Rounds) exploit(b Board, st state, ranked []string, step int) state {
	next := state{params: map[string][]Param{}, from: map[string]*Exploit{}, out: st.out}
	for k, p := range st.params {
		next.params[k] = p
	}
	for k, e := range st.from {
		next.from[k] = e
	}
	next.alive = slices.Sorted(slices.Values(ranked))
	n := int(float64(len(ranked)) * r.c.Population.Quantile)
	if len(ranked) < 2 || n == 0 {
		return next
	}
	top, bottom := ranked[:n], ranked[len(ranked)-n:]
	for _, loser := range bottom {
		rng := r.draws(step, loser)
		donor := top[rng.IntN(len(top))]
		next.params[loser] = r.explore(rng, st.params[donor])
		next.from[loser] = &Exploit{Step: step, From: donor, Value: r.at(b, step, loser), Params: next.params[loser]}
	}
	return next
}

// explore is pbt's new values from a donor's: each key explored drawn again from the space
// with probability resample, else multiplied by one of the perturb factors (drawn); the
// others stay the donor's, whose checkpoint the trial continues from.
func (r *Rounds) explore(rng *rand.Rand, donor []Param) []Param {
	out := slices.Clone(donor)
	for i, p := range out {
		ax := r.axis(p.Name)
		if ax == nil || len(r.c.Population.Explore) > 0 && !slices.Contains(r.c.Population.Explore, p.Name) {
			continue // a value it does not explore (a for-each item, a parent's, a width): the donor's
		}
		if rng.Float64() < r.c.Population.Resample {
			out[i].Value = ax.Draw(rng.Float64())
			continue
		}
		f := r.c.Population.Perturb[rng.IntN(len(r.c.Population.Perturb))]
		if v, ok := ax.Perturb(p.Value, f); ok {
			out[i].Value = v
		} else {
			out[i].Value = ax.Draw(rng.Float64()) // nothing to multiply: drawn again
		}
	}
	return out
}

func (r *Rounds) axis(name string) Axis {
	for _, a := range r.space {
		if a.Name() == name {
			return a
		}
	}
	return nil
}

// draws is the random source of one decision: seeded by the block, the step and the trial,
// so that every runall draws the same whatever else it decided before.
func (r *Rounds) draws(step int, trial string) *rand.Rand {
	h := sha256.Sum256([]byte(r.seed + "\x00" + strconv.Itoa(step) + "\x00" + trial))
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
}
