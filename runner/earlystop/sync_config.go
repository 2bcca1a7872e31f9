package earlystop

// The rules that pause trials at their checkpoints and resume them (rounds.go).
const (
	SHA       = "sha"       // synchronous successive halving
	Hyperband = "hyperband" // successive halving in brackets that start at different steps
	PBT       = "pbt"       // population-based training
)

// Population is pbt's keys: how often and how its population evolves.
type Population struct {
	Interval int       // pbt: steps between two exploits
	Quantile float64   // pbt: the fraction at the bottom that exploits, and at the top that is copied
	Perturb  []float64 // pbt: the factors a number is multiplied by
	Resample float64   // pbt: the chance a value is drawn from the space again instead
	Explore  []string  // pbt: the keys explored; none: every key of the space (the others are the donor's)
}

// pbt's defaults, as Ray Tune's.
const (
	DefaultQuantile = 0.25
	DefaultResample = 0.25
)

// DefaultPerturb are pbt's default factors.
func DefaultPerturb() []float64 { return []float64{0.8, 1.2} }

// withDefaults fills in what the task file left out.
func (c Config) withDefaults() Config {
	c.Grace = max(c.Grace, 1)
	c.Reduction = max(c.Reduction, 2)
	if c.Method == PBT {
		p := &c.Population
		p.Interval = max(p.Interval, 1)
		if p.Quantile <= 0 || p.Quantile > 0.5 {
			p.Quantile = DefaultQuantile
		}
		if len(p.Perturb) == 0 {
			p.Perturb = DefaultPerturb()
		}
	}
	return c
}
