package admit

// A device may be closed for a while: no trial is placed there until it opens again. Its
// MPS server is restarted so after a fault (runner/isolation.go), once its trials have gone.

// Close closes device dev to new trials; why says why, to the trials that wait.
func (a *Admitter) Close(dev int, why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if dev >= 0 && dev < len(a.devs.list) {
		a.devs.list[dev].closed = why
	}
}

// Open opens device dev again, and wakes the trials that wait.
func (a *Admitter) Open(dev int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if dev >= 0 && dev < len(a.devs.list) {
		a.devs.list[dev].closed = ""
	}
	a.meter.wake()
}

// Placed is how many trials are placed on device dev now.
func (a *Admitter) Placed(dev int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if dev < 0 || dev >= len(a.devs.list) {
		return 0
	}
	return len(a.devs.list[dev].trials)
}
