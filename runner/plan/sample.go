package plan

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"
)

// sample: draws a sweep's trials from a search space. Independent random draws leave holes
// and clumps; a low-discrepancy sequence spreads n points evenly, so that 27 sampled trials
// cover the space as a 3×3×3 grid does, without repeating any value of any key. The points
// are Owen-scrambled Halton points (gonum's samplemv), scrambled by seed: the same file and
// seed give the same trials, in every shard, claim and resume of the sweep.

// samplePoints are n points of the axes' distributions, each a value per axis, in order.
func samplePoints(axes []sampleAxis, n int, seed uint64) [][]string {
	if len(axes) == 0 || n <= 0 {
		return nil
	}
	src := rand.NewPCG(seed, 0x72756e616c6c) // "runall": any fixed stream will do
	unit := mat.NewDense(n, len(axes), nil)
	samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(len(axes), nil), Src: src}.Sample(unit)
	out := make([][]string, n)
	for i := range out {
		out[i] = make([]string, len(axes))
		for j, a := range axes {
			u := min(max(unit.At(i, j), 0), 1)
			out[i][j] = a.dist.At(u)
		}
	}
	return out
}
