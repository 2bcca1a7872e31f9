package claims_test

import (
	"context"
	"github.com/runall/runall/claims"
	"maps"
	"sync"
	"testing"
)

// TestRungs: two runalls' rung values meet in the store; a value written is read by the
// other, also after its writer is gone.
func TestRungs(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() claims.Store) {
		st := newStore()
		ctx := context.Background()
		one, err := claims.NewRungs(ctx, st, "block1")
		if err != nil {
			t.Fatal(err)
		}
		two, _ := claims.NewRungs(ctx, st, "block1")
		other, _ := claims.NewRungs(ctx, st, "block2")
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
		for _, r := range []*claims.Rungs{two, mustRungs(t, st, "block1")} {
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

func mustRungs(t *testing.T, st claims.Store, rule string) *claims.Rungs {
	r, err := claims.NewRungs(context.Background(), st, rule)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// countingStore counts the GET requests made through it.
type countingStore struct {
	claims.Store
	mu   sync.Mutex
	gets int
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Store.Get(ctx, key)
}

// TestRunningAverages: median's running averages live apart from asha's rung values; a
// runall reads each value once, and again only once it changed (a step drawn again).
func TestRunningAverages(t *testing.T) {
	stores(t, func(t *testing.T, newStore func() claims.Store) {
		st := newStore()
		writer, err := claims.NewRunningAverages(ctx, st, "block1")
		if err != nil {
			t.Fatal(err)
		}
		reads := &countingStore{Store: st}
		reader, _ := claims.NewRunningAverages(ctx, reads, "block1")
		asha := mustRungs(t, st, "block1")
		if err := asha.Put(2, "rung", 7); err != nil {
			t.Fatal(err)
		}
		for _, trial := range []string{"aaa", "bbb"} {
			if err := writer.Put(2, trial, 0.5); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			got, err := reader.Rung(2)
			if want := map[string]float64{"aaa": 0.5, "bbb": 0.5}; err != nil || !maps.Equal(got, want) {
				t.Fatalf("step 2: %v, %v; want %v", got, err, want)
			}
		}
		if reads.gets != 2 {
			t.Errorf("%d GETs for two values read three times, want 2", reads.gets)
		}
		if err := writer.Put(2, "aaa", 0.25); err != nil {
			t.Fatal(err)
		}
		got, _ := reader.Rung(2)
		if got["aaa"] != 0.25 || reads.gets != 3 {
			t.Errorf("after aaa's value changed: %v after %d GETs, want aaa 0.25 after 3", got, reads.gets)
		}
		if got, _ := asha.Rung(2); !maps.Equal(got, map[string]float64{"rung": 7}) {
			t.Errorf("asha's rung 2: %v, want only its own value", got)
		}
	})
}
