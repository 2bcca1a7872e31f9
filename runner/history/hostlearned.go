package history

// HostLearned is the host memory learned for a memory: auto group (plan.HostSpec.Group).
func (h *History) HostLearned(group string) (uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.state.HostLearned[group]
	return e.Bytes, ok
}

// SetHostLearned records the host memory learned for group; name is the trial it was
// learned from.
func (h *History) SetHostLearned(group, name string, need uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state.HostLearned[group] = entry{Name: name, Bytes: need}
}
