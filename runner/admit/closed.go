package admit

import "sync"

// Closed are the devices closed for a while: no trial is placed there until they open again.
// A GPU's MPS server is restarted so after a fault (runner/isolation.go), once its trials
// have gone. The admitter asks it (Options.Closed) as it looks for room.
type Closed struct {
	mu   sync.Mutex
	why  map[int]string
	wake func() // tells the waiting trials that a device opened
	// retired are the devices out of service until runall ends (closed_retire.go): Open
	// does not open them.
	retired map[int]string
}

// Close closes device dev to new trials; why says why, to the trials that wait.
func (c *Closed) Close(dev int, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.why == nil {
		c.why = map[int]string{}
	}
	c.why[dev] = why
}

// Open opens device dev again, and wakes the trials that wait.
func (c *Closed) Open(dev int) {
	c.mu.Lock()
	delete(c.why, dev)
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// Wake tells the trials that wait for room to try again now, though no device opened and
// no memory changed: what a Request's Gate says may have (gpu-sharing: progress judged a
// GPU's mix). The admitter's own wake, once it was made with these Closed (Options.Closed).
func (c *Closed) Wake() {
	c.mu.Lock()
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// reason is why dev is closed; "" when it is open. A nil Closed closes nothing.
func (c *Closed) reason(dev int) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if why, ok := c.retired[dev]; ok {
		return why
	}
	return c.why[dev]
}
