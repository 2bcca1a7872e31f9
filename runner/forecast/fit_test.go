package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/runall/runall/runner/earlystop"
)

// curves whose end is known: one of each family, as accuracies climb.
var known = []struct {
	name string
	f    func(x float64) float64
}{
	{"pow3", func(x float64) float64 { return 0.9 - 0.5*math.Pow(x, -0.6) }},
	{"ilog2", func(x float64) float64 { return 0.95 - 0.4/math.Log(x+1) }},
	{"janoschek", func(x float64) float64 { return 0.85 - (0.85-0.3)*math.Exp(-0.15*math.Pow(x, 0.9)) }},
	{"log_power", func(x float64) float64 { return 0.9 / (1 + math.Pow(x/math.Exp(1), -0.8)) }},
	{"weibull", func(x float64) float64 { return 0.8 - (0.8-0.2)*math.Exp(-math.Pow(0.1*x, 0.8)) }},
	{"mmf", func(x float64) float64 { return 0.9 - (0.9-0.1)/(1+math.Pow(0.2*x, 1.1)) }},
	{"vap", func(x float64) float64 { return math.Exp(-0.1 - 1.0/x + 0.01*math.Log(x)) }},
	{"loglog_linear", func(x float64) float64 { return math.Log(0.3*math.Log(x) + 1.5) }},
	{"exp4", func(x float64) float64 { return 0.88 - math.Exp(-0.2*math.Pow(x, 0.8)-0.5) }},
	{"pow4", func(x float64) float64 { return 0.9 - math.Pow(0.5*x+1, -0.7) }},
	{"dr_hill", func(x float64) float64 { return 0.9 * math.Pow(x, 1.2) / (math.Pow(4, 1.2) + math.Pow(x, 1.2)) }},
}

func curve(f func(float64) float64, steps int, noise float64, seed uint64) []Point {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []Point
	for s := 1; s <= steps; s++ {
		out = append(out, Point{s, f(float64(s)) + noise*r.NormFloat64()})
	}
	return out
}

// Each family's own curve, seen to step 20 of 60, is forecast at 60 near its true end, and
// the end lies within the forecast's 90% band.
func TestFitEachFamily(t *testing.T) {
	for _, c := range known {
		t.Run(c.name, func(t *testing.T) {
			p, ok := Fit(curve(c.f, 20, 0, 0), 60, nil)
			if !ok {
				t.Fatal("no forecast")
			}
			end := c.f(60)
			med, lo, hi := p.Quantile(0.5), p.Quantile(0.05), p.Quantile(0.95)
			if math.Abs(med-end) > 0.03 || end < lo || end > hi {
				t.Errorf("forecast at 60: median %.4f, 90%% band %.4f to %.4f; true %.4f (weights %v)", med, lo, hi, end, p.Weights())
			}
		})
	}
}

// With noise, the median is near the true end and the end lies within the 98% band (a 90%
// band misses one curve in ten by design).
func TestFitNoisy(t *testing.T) {
	for i, c := range known {
		t.Run(c.name, func(t *testing.T) {
			p, ok := Fit(curve(c.f, 25, 0.005, uint64(i)), 60, nil)
			if !ok {
				t.Fatal("no forecast")
			}
			end := c.f(60)
			med, lo, hi := p.Quantile(0.5), p.Quantile(0.01), p.Quantile(0.99)
			if math.Abs(med-end) > 0.04 || end < lo || end > hi {
				t.Errorf("forecast at 60: median %.4f, 98%% band %.4f to %.4f; true %.4f", med, lo, hi, end)
			}
		})
	}
}

// A flat curve is forecast to stay where it is, with a narrow band.
func TestFitFlat(t *testing.T) {
	p, ok := Fit(curve(func(float64) float64 { return 0.5 }, 10, 0, 0), 100, nil)
	if !ok {
		t.Fatal("no forecast")
	}
	if med, lo, hi := p.Quantile(0.5), p.Quantile(0.05), p.Quantile(0.95); math.Abs(med-0.5) > 1e-6 || hi-lo > 1e-3 {
		t.Errorf("flat 0.5: median %v, band %v to %v", med, lo, hi)
	}
}

// Curves that cross: one that climbs fast and levels off low, one that starts slow and ends
// higher. Seen to step 8, where the fast one still leads, the slow one is forecast to end
// above it.
func TestFitCrossing(t *testing.T) {
	fast := func(x float64) float64 { return 0.75 - 0.5*math.Exp(-0.5*x) }
	slow := func(x float64) float64 { return 0.92 - 0.8*math.Pow(x, -0.5) }
	if fast(8) <= slow(8) || fast(60) >= slow(60) {
		t.Fatal("the curves do not cross between steps 8 and 60")
	}
	pf, ok1 := Fit(curve(fast, 8, 0.002, 1), 60, nil)
	ps, ok2 := Fit(curve(slow, 8, 0.002, 2), 60, nil)
	if !ok1 || !ok2 {
		t.Fatal("no forecast")
	}
	if mf, ms := pf.Quantile(0.5), ps.Quantile(0.5); ms <= mf {
		t.Errorf("forecast at 60: slow %.4f, fast %.4f (true %.4f, %.4f): the slow one should end above", ms, mf, slow(60), fast(60))
	}
	if c := ps.Above(fast(60)); c < 0.5 {
		t.Errorf("chance the slow one ends above the fast one's end %.4f: %.3f", fast(60), c)
	}
}

// Steps without a usable value are left out of the fit: the forecast is the one of the
// curve without them; and fewer than three usable points give none.
func TestFitNaNSteps(t *testing.T) {
	f := known[0].f
	full := curve(f, 12, 0, 0)
	holed := append([]Point(nil), full...)
	holed[3].Value, holed[7].Value = math.NaN(), math.Inf(1)
	var without []Point
	for i, p := range full {
		if i != 3 && i != 7 {
			without = append(without, p)
		}
	}
	a, ok1 := Fit(holed, 60, nil)
	b, ok2 := Fit(without, 60, nil)
	if !ok1 || !ok2 || a.Quantile(0.5) != b.Quantile(0.5) {
		t.Errorf("with NaN steps %v (ok %v), without them %v (ok %v)", a.Quantile(0.5), ok1, b.Quantile(0.5), ok2)
	}
	few := []Point{{1, 0.3}, {2, math.NaN()}, {3, 0.5}, {4, math.NaN()}}
	if _, ok := Fit(few, 60, nil); ok {
		t.Error("a forecast from two usable points")
	}
}

// The same points give the same forecast, and only the families named are fitted.
func TestFitDeterministicAndNamed(t *testing.T) {
	pts := curve(known[2].f, 15, 0.01, 3)
	a, _ := Fit(pts, 50, nil)
	b, _ := Fit(pts, 50, nil)
	if a.Quantile(0.5) != b.Quantile(0.5) || a.Above(0.8) != b.Above(0.8) {
		t.Error("two fits of the same points differ")
	}
	p, ok := Fit(pts, 50, []string{"pow3", "mmf"})
	if w := p.Weights(); !ok || len(w) != 2 || w["pow3"]+w["mmf"] < 0.999 {
		t.Errorf("weights of pow3 and mmf alone: %v", w)
	}
}

// The task file's list of families (runner/earlystop, which may not import this package)
// is the one fitted here.
func TestFamiliesAsTheTaskFileNamesThem(t *testing.T) {
	if got := FamilyNames(); !slices.Equal(got, earlystop.ForecastFamilies) {
		t.Errorf("families fitted %v, the task file takes %v", got, earlystop.ForecastFamilies)
	}
}
