package history

// RateAlone is the progress rate (steps per second) the task with this key last ran at
// alone on a GPU, as gpu-sharing: progress measured it; false when none was measured.
func (h *History) RateAlone(key string) (float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.state.RatesAlone[key]
	return e.Rate, ok && e.Rate > 0
}

// SetRateAlone records the rate the task with this key (named name) ran at alone on a GPU.
// A rate that is not positive is not kept.
func (h *History) SetRateAlone(key, name string, rate float64) {
	if !(rate > 0) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state.RatesAlone[key] = entry{Name: name, Rate: rate}
}
