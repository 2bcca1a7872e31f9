package plan

import (
	"math"

	"github.com/runall/runall/runner/taskfile"
)

// sample: draws a sweep's trials from a search space. Independent random draws leave holes
// and clumps; a low-discrepancy sequence spreads n points evenly, so that 27 sampled trials
// cover the space as a 3×3×3 grid does. The points are Halton points (dimension j in the
// j-th prime base) with nested uniform scrambling (Owen's): digit k of a coordinate goes
// through a permutation of the base's digits picked by the seed, the dimension, k and the
// digits before it, so that the points keep the sequence's spread (b^k points still put one
// point in each of b^k bins) and lose its lattice (gonum's scrambling permuted each digit
// alike: loguniform(1e-4, 1) gave 0.140223, 0.0140223, 0.00140223, ..., a decade apart). The
// same file and seed give the same trials, in every shard, claim and resume of the sweep.

// samplePoints are n points of the axes' distributions, each a value per axis, in order.
func samplePoints(axes []taskfile.SampleAxis, n int, seed uint64) [][]string {
	if len(axes) == 0 || n <= 0 {
		return nil
	}
	bases := primes(len(axes))
	out := make([][]string, n)
	for i := range out {
		out[i] = make([]string, len(axes))
		for j, a := range axes {
			out[i][j] = a.Dist.At(scrambledRadicalInverse(uint64(i), bases[j], mix(seed, uint64(j))))
		}
	}
	return out
}

// scrambledRadicalInverse is point i of the van der Corput sequence in base b, nested
// scrambled with key: a point of [0, 1).
func scrambledRadicalInverse(i, b, key uint64) float64 {
	u, w := 0.0, 1/float64(b)
	node := key // the tree node: the digits of i read so far
	for k := uint64(0); w > 0x1p-60; k++ {
		d := i % b
		i /= b
		// A random affine bijection of the digits 0..b-1 (b is prime): a·d + c mod b.
		r := mix(node, k)
		a, c := 1+r%(b-1), (r>>32)%b
		if b == 2 {
			a = 1 // the two permutations of {0, 1}: c chooses
		}
		u += float64((a*d+c)%b) * w
		node = mix(node, d+1)
		w /= float64(b)
	}
	return math.Min(u, math.Nextafter(1, 0))
}

// mix is a splitmix64 step of x and y: a hash good enough to pick permutations with.
func mix(x, y uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15*(y+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// primes are the first n primes.
func primes(n int) []uint64 {
	var out []uint64
	for c := uint64(2); len(out) < n; c++ {
		prime := true
		for _, p := range out {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			out = append(out, c)
		}
	}
	return out
}
