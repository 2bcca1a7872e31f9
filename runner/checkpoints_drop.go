package runner

// DropNext asks that the next attempt of the trial kept as id start with its kept copy
// dropped and its directory emptied, as --fresh does (on-oom halved its param: what it
// kept was made with the other value). It is the GPU resource's gpures.Dropper. A nil
// checkpoints (no trial has one) drops nothing.
func (c *checkpoints) DropNext(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drop == nil {
		c.drop = map[string]bool{}
	}
	c.drop[id] = true
}

// dropAsked reports whether what was kept for id is to be dropped now, and forgets the ask.
func (c *checkpoints) dropAsked(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	asked := c.drop[id]
	delete(c.drop, id)
	return asked
}
