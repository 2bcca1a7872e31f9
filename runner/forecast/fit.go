package forecast

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Point is a curve's value at a step (1 for its first).
type Point struct {
	Step  int
	Value float64
}

// The fit's limits.
const (
	// maxFitPoints bounds the points a fit reads: a longer curve is thinned evenly (its last
	// point kept), so that a decision costs the same at step 100 and at step 100,000.
	maxFitPoints = 64
	// minPoints is the fewest usable points a forecast is made from: a family of 2
	// parameters then has one residual to measure the noise with. A forecast waits for
	// more: one point past the parameters of every family it fits (needed), so that no
	// family is left out for want of points (with 3 points only ilog2 and loglog_linear
	// fit, and both run on climbing where a curve that bends levels off).
	minPoints = 3
	// noiseFloor is the least residual noise a family is given, as a share of the curve's
	// range so far: a family that passes through every point exactly is not certain of the
	// future.
	noiseFloor = 1e-3
	// farOut is how many of the curve's ranges beyond what it has shown a family's forecast
	// may lie before the family is left out (vap's exponential, say, that runs away).
	farOut = 20
	// fitEvaluations bounds each family's Nelder-Mead search.
	fitEvaluations = 3000
)

// Fit forecasts the curve's value at step at, higher values being the better: each family
// named (all of them when none is) is fitted by least squares (Nelder-Mead), its forecast
// is a normal distribution whose variance is the residual noise plus the parameters'
// uncertainty carried to step at (the delta method over the fit's Jacobian, as nonlinear
// regression's prediction interval has it: Seber & Wild 1989, 5.1), and the families are
// weighed by their Bayesian information criterion (Burnham & Anderson 2002: weights
// e^(-BIC/2)). Points without a usable value (NaN, ±Inf) are left out. ok is false when
// fewer than minPoints are usable or no family fits. The same points give the same forecast:
// nothing is drawn at random.
func Fit(points []Point, at int, names []string) (p Prediction, ok bool) {
	xs, ys := usablePoints(points)
	if len(xs) < needed(names) {
		return Prediction{}, false
	}
	// The fit is in the curve's own units, neither shifted nor scaled: vap, log_power,
	// dr_hill and loglog_linear have no offset of their own, loglog_linear no scale, and
	// either would move a curve out of its family.
	lo, hi := slices.Min(ys), slices.Max(ys)
	shape := fitShape{span: max(hi-lo, 1e-9*max(1, math.Abs(hi))), mid: (hi + lo) / 2}
	var parts []part
	var bics []float64
	for _, fam := range families {
		if len(names) > 0 && !slices.Contains(names, fam.name) {
			continue
		}
		if q, bic, ok := fitFamily(fam, xs, ys, float64(at), shape); ok {
			parts = append(parts, part{w: 1, mu: q.mu, sd: q.sd, name: fam.name})
			bics = append(bics, bic)
		}
	}
	if len(parts) == 0 {
		return Prediction{}, false
	}
	best := slices.Min(bics)
	sum := 0.0
	for i := range parts {
		parts[i].w = math.Exp(-(bics[i] - best) / 2)
		sum += parts[i].w
	}
	for i := range parts {
		parts[i].w /= sum
	}
	return Prediction{parts: parts}, true
}

// needed is how many usable points a forecast from the families named (all when none)
// waits for: one more than the most parameters among them, and minPoints at least.
func needed(names []string) int {
	n := minPoints
	for _, fam := range families {
		if len(names) == 0 || slices.Contains(names, fam.name) {
			n = max(n, len(fam.start(1, 2, 2))+1)
		}
	}
	return n
}

// usablePoints are the points with usable values, by step, the last value of a step drawn
// twice kept, thinned to maxFitPoints.
func usablePoints(points []Point) (xs, ys []float64) {
	byStep := map[int]float64{}
	for _, p := range points {
		if p.Step >= 1 && !math.IsNaN(p.Value) && !math.IsInf(p.Value, 0) {
			byStep[p.Step] = p.Value
		} else if p.Step >= 1 {
			delete(byStep, p.Step) // a step drawn again without a value has none
		}
	}
	steps := make([]int, 0, len(byStep))
	for s := range byStep {
		steps = append(steps, s)
	}
	slices.Sort(steps)
	stride := (len(steps) + maxFitPoints - 1) / maxFitPoints
	for i := len(steps) - 1; i >= 0; i -= max(stride, 1) {
		xs = append(xs, float64(steps[i]))
		ys = append(ys, byStep[steps[i]])
	}
	slices.Reverse(xs)
	slices.Reverse(ys)
	return xs, ys
}

// fitFamily fits fam to the points (ys in the fit's units) and gives its forecast at x with
// its BIC; ok is false when it has too few points for its parameters or its fit fails.
func fitFamily(fam family, xs, ys []float64, at float64, shape fitShape) (q part, bic float64, ok bool) {
	n := len(xs)
	start := fam.start(ys[0], ys[n-1], xs[n-1])
	k := len(start)
	if n-k < 1 {
		return part{}, 0, false
	}
	for i, v := range start {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			start[i] = 0
		}
	}
	sse := func(p []float64) float64 {
		s := 0.0
		for i, x := range xs {
			d := fam.f(x, p) - ys[i]
			s += d * d
		}
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return math.MaxFloat64 / 4 // outside where the family is defined
		}
		return s
	}
	theta, f, ok := minimize(sse, start)
	if !ok {
		return part{}, 0, false
	}
	mu := fam.f(at, theta)
	if math.IsNaN(mu) || math.IsInf(mu, 0) || math.Abs(mu-shape.mid) > farOut*shape.span {
		return part{}, 0, false
	}
	floor := noiseFloor * shape.span
	noise := max(f/float64(n-k), floor*floor)
	spread, ok := paramSpread(fam, xs, theta, at)
	if !ok {
		return part{}, 0, false
	}
	bic = float64(n)*math.Log(max(f, float64(n)*floor*floor)/float64(n)) + float64(k)*math.Log(float64(n))
	return part{mu: mu, sd: math.Sqrt(noise * (1 + spread))}, bic, true
}

// fitShape is what a family's fit is measured against: the curve's range so far and its
// middle, in the fit's units.
type fitShape struct{ span, mid float64 }

// restarts is how often Nelder-Mead starts again from where it stopped: a fresh simplex
// there gets it out of the valleys its first one collapsed in.
const restarts = 3

// minimize is the least of sse that Nelder-Mead finds from start, restarted.
func minimize(sse func([]float64) float64, start []float64) (theta []float64, f float64, ok bool) {
	settings := &optimize.Settings{FuncEvaluations: fitEvaluations,
		Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-9, Iterations: 30}}
	theta, f = start, sse(start)
	for range restarts {
		res, _ := optimize.Minimize(optimize.Problem{Func: sse}, theta, settings, &optimize.NelderMead{})
		if res == nil || res.F >= f {
			break
		}
		theta, f = res.X, res.F
	}
	return theta, f, f < math.MaxFloat64/8
}

// paramSpread is gᵀ(JᵀJ)⁻¹g: how much of the residual noise the parameters' uncertainty adds
// to the forecast at x, J being the fit's Jacobian at the points and g the forecast's
// gradient, both by central differences. A small ridge keeps a parameter the points do not
// determine (the exponent of a curve that is still a line) from making it infinite.
func paramSpread(fam family, xs, theta []float64, at float64) (float64, bool) {
	k := len(theta)
	grad := func(x float64) []float64 {
		g := make([]float64, k)
		p := slices.Clone(theta)
		for j := range k {
			h := 1e-6 * max(1, math.Abs(theta[j]))
			p[j] = theta[j] + h
			up := fam.f(x, p)
			p[j] = theta[j] - h
			down := fam.f(x, p)
			p[j] = theta[j]
			g[j] = (up - down) / (2 * h)
		}
		return g
	}
	jac := mat.NewDense(len(xs), k, nil)
	for i, x := range xs {
		jac.SetRow(i, grad(x))
	}
	var jtj mat.SymDense
	jtj.SymOuterK(1, jac.T())
	trace := 0.0
	for j := range k {
		trace += jtj.At(j, j)
	}
	for j := range k {
		jtj.SetSym(j, j, jtj.At(j, j)+1e-8*(trace/float64(k))+1e-12)
	}
	var chol mat.Cholesky
	if !chol.Factorize(&jtj) {
		return 0, false
	}
	g := mat.NewVecDense(k, grad(at))
	var v mat.VecDense
	if err := chol.SolveVecTo(&v, g); err != nil {
		return 0, false
	}
	s := mat.Dot(g, &v)
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		return 0, false
	}
	return s, true
}
