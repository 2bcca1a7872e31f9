package admit

// Forget drops the need a raised for trial id after it ran out of GPU memory, and its
// requeues (needs.Book.Forget): on-oom retries it with a param halved, on its group's
// declared or learned need. A function, not a method: the Admitter's methods are its
// placing and measuring; this is the book's, reached through its lock.
func Forget(a *Admitter, id int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.book.Forget(id)
}
