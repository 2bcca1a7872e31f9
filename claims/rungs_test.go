package claims

import (
	"context"
	"maps"
	"testing"
)

// TestRungs: two runalls' rung values meet in the store; a value written is read by the
// other, also after its writer is gone.
func TestRungs(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() Store) {
		st := newStore()
		ctx := context.Background()
		one, err := NewRungs(ctx, st, "block1")
		if err != nil {
			t.Fatal(err)
		}
		two, _ := NewRungs(ctx, st, "block1")
		other, _ := NewRungs(ctx, st, "block2")
		if err := one.Put(3, "aaa", 0.5); err != nil {
			t.Fatal(err)
		}
		if err := two.Put(3, "bbb", -1.25e-3); err != nil {
			t.Fatal(err)
		}
		if err := other.Put(3, "ccc", 9); err != nil {
			t.Fatal(err)
		}
		// A runall started later (or after one was SIGKILLed) reads what the others wrote.
		for _, r := range []*Rungs{two, mustRungs(t, st, "block1")} {
			got, err := r.Rung(3)
			if want := map[string]float64{"aaa": 0.5, "bbb": -1.25e-3}; err != nil || !maps.Equal(got, want) {
				t.Errorf("rung 3: %v, %v; want %v", got, err, want)
			}
		}
		if got, _ := two.Rung(9); len(got) != 0 {
			t.Errorf("rung 9: %v, want none", got)
		}
		if err := two.Put(1, "a/b", 1); err == nil {
			t.Error("a trial name with / was written")
		}
	})
}

func mustRungs(t *testing.T, st Store, rule string) *Rungs {
	r, err := NewRungs(context.Background(), st, rule)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
