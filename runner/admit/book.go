package admit

// book is the admitter's book of needs: what each group learned (and the history that keeps
// it), the trial learning each group's need, and the needs raised after out-of-memory
// errors with the requeues that raised them. It measures nothing and places nothing; the
// Admitter's lock guards it (learn.go and settle.go hold its methods).
type book struct {
	hist        Needs
	oomRetries  int                   // how often a trial may be requeued after running out of memory
	raised      map[int]uint64        // trial ID → need raised after running out of memory
	groupRaised map[string]uint64     // group → need a sibling's out-of-memory showed
	requeues    map[int]int           // trial ID → times requeued after running out of memory
	victims     map[int]int           // trial ID → of those, times it had stayed within its need
	learning    map[string]*Placement // group → the trial that learns its need
}

func newBook(hist Needs, oomRetries int) book {
	return book{
		hist:        hist,
		oomRetries:  oomRetries,
		raised:      map[int]uint64{},
		groupRaised: map[string]uint64{},
		requeues:    map[int]int{},
		victims:     map[int]int{},
		learning:    map[string]*Placement{},
	}
}
