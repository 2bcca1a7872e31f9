package admit

// settleLocked settles the needs of the trials whose memory has stopped growing (the book
// of needs' Settle: a learner's, and a raised one's where its peak is its own).
func (a *Admitter) settleLocked() { a.book.Settle(a.snapAt) }

// Need is the need p's trial ends with, for its results: the one it was admitted with; or,
// where it learned its group's need or ran on a need runall raised, its own peak plus the
// margin (needs.Book.Final).
func (a *Admitter) Need(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.book.Final(p.entry)
}
