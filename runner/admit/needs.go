package admit

// Needs is where the needs learned for gpu-memory: auto groups are kept across runs: the
// run's history. The admitter reads a group's need before it learns one, and records what
// it learned.
type Needs interface {
	Learned(group string) (uint64, bool)
	SetLearned(group, name string, need uint64)
}

// memNeeds keeps learned needs for the admitter's life alone. The admitter calls it under
// its lock.
type memNeeds map[string]uint64

func (m memNeeds) Learned(group string) (uint64, bool) { n, ok := m[group]; return n, ok }

func (m memNeeds) SetLearned(group, _ string, need uint64) { m[group] = need }

// Margin is the memory kept free on every device: the larger of Bytes and Fraction of its
// total.
type Margin struct {
	Bytes    uint64
	Fraction float64
}

// For returns the margin on a device with the given total memory.
func (m Margin) For(total uint64) uint64 {
	return max(m.Bytes, uint64(m.Fraction*float64(total)))
}
