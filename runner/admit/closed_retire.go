package admit

// Retire takes device dev out of service until runall ends: no trial is placed there
// again, whatever else opens it (an MPS server restarted after a fault, say). why says why,
// to the trials that wait.
func (c *Closed) Retire(dev int, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retired == nil {
		c.retired = map[int]string{}
	}
	c.retired[dev] = why
}
