package admit

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
