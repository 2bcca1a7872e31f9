package gpures

import (
	"testing"
)

// A trial is requeued as a fault's bystander at most maxBystander times: one whose own fault
// the server log never tied to it would otherwise go round for ever.
func TestBystanderRequeuesAreBounded(t *testing.T) {
	i := &isolation{victims: map[int]int{}}
	for n := 1; n <= maxBystander; n++ {
		if !i.RequeueBystander(7) {
			t.Fatalf("requeue %d of task 7 refused, want %d allowed", n, maxBystander)
		}
	}
	if i.RequeueBystander(7) {
		t.Errorf("task 7 requeued a %dth time as a bystander", maxBystander+1)
	}
	if !i.RequeueBystander(8) {
		t.Errorf("task 8 refused its first requeue: the count is per task")
	}
}
