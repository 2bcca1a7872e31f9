package claims_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/s3sync"
)

// TestBoardUnreadValueSaidOnce: a value on a rounds board that cannot be read (torn, or an
// object with no number) is no value, is said once per version of its object with the
// trial, the object and what to do, and is read once it holds a value again; one of a trial
// that ended is not said, since no round waits for it.
func TestBoardUnreadValueSaidOnce(t *testing.T) {
	st := claimstest.NewMem()
	b, err := claims.NewBoard(st, "blk")
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	b.OnUnread(func(s string) { said = append(said, s) })
	put := func(key, body string) {
		t.Helper()
		if _, err := st.Put(ctx, key, []byte(body), s3sync.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Value(ctx, 3, "aaa", 0.5); err != nil {
		t.Fatal(err)
	}
	put("rounds/blk/3/bbb.json", `{"val`)
	put("rounds/blk/3/ccc.json", `{}`)
	put("rounds/blk/3/ddd.json", `{"value": tor`)
	if err := b.Ended(ctx, "ddd"); err != nil {
		t.Fatal(err)
	}
	load := func(want map[string]float64) {
		t.Helper()
		values, _, _, err := b.Load(ctx)
		if err != nil || !maps.Equal(values[3], want) {
			t.Fatalf("step 3: %v, %v; want %v", values[3], err, want)
		}
	}
	load(map[string]float64{"aaa": 0.5})
	if len(said) != 2 {
		t.Fatalf("said %d lines, want 2 (bbb's and ccc's): %q", len(said), said)
	}
	for _, trial := range []string{"bbb", "ccc"} {
		line := strings.Join(said, "\n")
		for _, want := range []string{"trial " + trial + " at step 3", "rounds/blk/3/" + trial + ".json", "rounds/blk/ended/" + trial + ".json", "waits"} {
			if !strings.Contains(line, want) {
				t.Errorf("nothing says %q: %q", want, said)
			}
		}
	}
	load(map[string]float64{"aaa": 0.5})
	if len(said) != 2 {
		t.Errorf("read again, said again: %q", said)
	}
	put("rounds/blk/3/bbb.json", `{"value": 2}`)
	put("rounds/blk/3/ccc.json", `{"value": "x"}`)
	load(map[string]float64{"aaa": 0.5, "bbb": 2})
	if len(said) != 3 || !strings.Contains(said[2], "trial ccc") {
		t.Errorf("a new version of ccc's object is said once more: %q", said)
	}
}

// TestRungsUnreadValueSaid: asha's and median's values that cannot be read are left out of
// the rule's decision as before, but said, once per version of the object, with the trial,
// the object and what to do, instead of silently.
func TestRungsUnreadValueSaid(t *testing.T) {
	st := claimstest.NewMem()
	r, err := claims.NewRungs(ctx, st, "blk")
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	r.OnUnread(func(s string) { said = append(said, s) })
	if err := r.Put(1, "aaa", 0.5); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "rungs/blk/1/bbb.json", []byte(`{"value": 0.`), s3sync.Condition{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := r.Rung(1)
		if err != nil || !maps.Equal(got, map[string]float64{"aaa": 0.5}) {
			t.Fatalf("rung 1: %v, %v; want aaa's value alone", got, err)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "trial bbb at step 1 (rungs/blk/1/bbb.json) cannot be read") || !strings.Contains(said[0], "decides without it") {
		t.Errorf("said %q, want bbb's value said once", said)
	}
}
