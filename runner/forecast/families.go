package forecast

import "math"

// A family is one of Domhan et al.'s (IJCAI 2015, table 1) parametric learning curves: a
// value by step x (≥ 1) from a few parameters. The parameters a family takes are written so
// that any real vector is valid: a rate or an exponent that must be positive is e^p, so that
// an unconstrained optimiser (Nelder-Mead) searches them all. start is where its fit begins,
// from the curve in the fit's units (first and last value, and its length n).
type family struct {
	name  string
	f     func(x float64, p []float64) float64
	start func(first, last, n float64) []float64
}

// families are the eleven of Domhan et al. (their code, pylearningcurvepredictor, names them
// so). Each saturates as the step grows, or grows ever more slowly, as a learning curve does;
// the ensemble weighs them by how well each explains the curve so far.
var families = []family{
	{"pow3", func(x float64, p []float64) float64 { // c - a·x^-α
		return p[0] - p[1]*math.Pow(x, -math.Exp(p[2]))
	}, func(first, last, n float64) []float64 { return []float64{last, last - first, math.Log(0.5)} }},
	{"ilog2", func(x float64, p []float64) float64 { // c - a/log(x+1)
		return p[0] - p[1]/math.Log(x+1)
	}, func(first, last, n float64) []float64 { return []float64{last, (last - first) * math.Ln2} }},
	{"janoschek", func(x float64, p []float64) float64 { // α - (α-β)·e^(-κ·x^δ)
		return p[0] - (p[0]-p[1])*math.Exp(-math.Exp(p[2])*math.Pow(x, math.Exp(p[3])))
	}, func(first, last, n float64) []float64 { return []float64{last, first, math.Log(1 / n), 0} }},
	{"log_power", func(x float64, p []float64) float64 { // a/(1+(x/e^b)^c)
		return p[0] / (1 + math.Pow(x/math.Exp(p[1]), p[2]))
	}, func(first, last, n float64) []float64 { return []float64{last, 0, -1} }},
	{"weibull", func(x float64, p []float64) float64 { // α - (α-β)·e^(-(κx)^δ)
		return p[0] - (p[0]-p[1])*math.Exp(-math.Pow(math.Exp(p[2])*x, math.Exp(p[3])))
	}, func(first, last, n float64) []float64 { return []float64{last, first, math.Log(1 / n), 0} }},
	{"mmf", func(x float64, p []float64) float64 { // α - (α-β)/(1+(κx)^δ)
		return p[0] - (p[0]-p[1])/(1+math.Pow(math.Exp(p[2])*x, math.Exp(p[3])))
	}, func(first, last, n float64) []float64 { return []float64{last, first, math.Log(1 / n), 0} }},
	{"vap", func(x float64, p []float64) float64 { // e^(a + b/x + c·log x)
		return math.Exp(p[0] + p[1]/x + p[2]*math.Log(x))
	}, func(first, last, n float64) []float64 {
		return []float64{math.Log(last), math.Log(first) - math.Log(last), 0}
	}},
	{"loglog_linear", func(x float64, p []float64) float64 { // log(a·log x + b)
		return math.Log(p[0]*math.Log(x) + p[1])
	}, func(first, last, n float64) []float64 {
		return []float64{(math.Exp(last) - math.Exp(first)) / math.Log(max(n, 2)), math.Exp(first)}
	}},
	{"exp4", func(x float64, p []float64) float64 { // c - e^(-a·x^α + b)
		return p[0] - math.Exp(-math.Exp(p[1])*math.Pow(x, math.Exp(p[2]))+p[3])
	}, func(first, last, n float64) []float64 {
		return []float64{last, math.Log(1 / n), 0, math.Log(max(last-first, 1e-3))}
	}},
	{"pow4", func(x float64, p []float64) float64 { // c - (a·x + b)^-α
		return p[0] - math.Pow(math.Exp(p[1])*x+math.Exp(p[2]), -math.Exp(p[3]))
	}, func(first, last, n float64) []float64 { return []float64{last, 0, 0, math.Log(0.5)} }},
	{"dr_hill", func(x float64, p []float64) float64 { // θ·x^η/(κ^η + x^η), zero background
		eta := math.Exp(p[2])
		return p[0] * math.Pow(x, eta) / (math.Pow(math.Exp(p[1]), eta) + math.Pow(x, eta))
	}, func(first, last, n float64) []float64 { return []float64{last, math.Log(n / 4), 0} }},
}

// FamilyNames are the families' names, in the order they are fitted.
func FamilyNames() []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = f.name
	}
	return out
}
