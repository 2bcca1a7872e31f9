package metric

import (
	"maps"
	"slices"
)

// A trial resumed from its checkpoint goes on at the step the checkpoint holds: its
// series is the kept one up to that step, and its next value of each metric is the step
// after it (Keras prints Epoch 7/12 after restoring epoch 6's weights).

// Resume counts the steps of every name from step: the next value of a name is step+1.
// Like Restart, it is called as an attempt starts; Resume(0) is Restart.
func (r *Reader) Resume(step int) {
	r.Restart()
	r.base = max(step, 0)
}

// Seed replaces what the set holds with series (each name's values, in step order): the
// values a resumed trial reported before the step it resumed from. The warnings stay.
func (s *Set) Seed(series map[string][]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.last)
	clear(s.series)
	for _, name := range sortedKeys(series) {
		for _, v := range series[name] {
			s.record(name, v)
		}
	}
}

func sortedKeys(m map[string][]float64) []string {
	return slices.Sorted(maps.Keys(m))
}
