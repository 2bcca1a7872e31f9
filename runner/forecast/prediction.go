package forecast

import "math"

// Prediction is a forecast of a curve's value at a step: a mixture of normal distributions,
// one per family that fitted, weighed by how well it did.
type Prediction struct {
	parts []part
}

// part is one family's forecast.
type part struct {
	w, mu, sd float64
	name      string
}

// Above is the probability that the value lies above v.
func (p Prediction) Above(v float64) float64 { return 1 - p.CDF(v) }

// CDF is the probability that the value is at most v.
func (p Prediction) CDF(v float64) float64 {
	s := 0.0
	for _, q := range p.parts {
		if q.sd == 0 {
			if q.mu <= v {
				s += q.w
			}
			continue
		}
		s += q.w * 0.5 * math.Erfc(-(v-q.mu)/(q.sd*math.Sqrt2)) // the normal CDF
	}
	return min(max(s, 0), 1)
}

// Quantile is the value the forecast puts the share q (0 < q < 1) of its probability below,
// found by bisection on the mixture's CDF.
func (p Prediction) Quantile(q float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range p.parts {
		lo = min(lo, c.mu-9*c.sd)
		hi = max(hi, c.mu+9*c.sd)
	}
	for range 100 {
		mid := lo + (hi-lo)/2
		if p.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// Weights are the families that fitted, with their weights.
func (p Prediction) Weights() map[string]float64 {
	out := map[string]float64{}
	for _, q := range p.parts {
		out[q.name] = q.w
	}
	return out
}
