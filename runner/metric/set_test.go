package metric

// Line takes one line of a task's stdout, as a Reader without recognisers would: a metric
// line's values are added, each to the series of its name. It reports whether the line was
// a metric line. The tests feed a Set with it.
func (s *Set) Line(line string) bool {
	if !IsLine(line) {
		return false
	}
	rs := s.lineValues(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range rs {
		if !x.missing {
			s.add(x.name, x.value)
		}
	}
	return true
}
