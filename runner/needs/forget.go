package needs

// Forget drops what the book raised for trial id after it ran out of memory, and its
// requeues: the trial goes again as another (on-oom halved a param), on its group's
// declared or learned need, its oom-retries whole again.
func (b *Book) Forget(id int) {
	delete(b.raised, id)
	delete(b.requeues, id)
	delete(b.victims, id)
}
