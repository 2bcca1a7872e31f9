package history

// RateAlone is the progress rate (steps per second) the task with this key last ran at
// alone on a GPU of model gpu (NVML's name), as gpu-sharing: progress measured it; false
// when none was measured on that model: a rate on one model says nothing of another's.
func (h *History) RateAlone(key, gpu string) (float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.state.RatesAlone[key]
	return e.Rate, ok && e.Rate > 0 && e.GPU == gpu
}

// SetRateAlone records the rate the task with this key (named name) ran at alone on a GPU
// of model gpu, in place of any on another model. A rate that is not positive is not kept.
func (h *History) SetRateAlone(key, name, gpu string, rate float64) {
	if !(rate > 0) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state.RatesAlone[key] = entry{Name: name, Rate: rate, GPU: gpu}
}
