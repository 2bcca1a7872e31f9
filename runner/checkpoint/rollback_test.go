package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDistrustTakesBackToBeforeTheFault (issue 45, point 1): after a memory error, the
// copies kept since it came are dropped and the trial resumes from the copy kept before
// it, also when the fault is read after the attempt ended (its end kept a copy too); a
// fault before every copy it kept takes the trial back to its start; nothing more is kept
// once distrusted.
func TestDistrustTakesBackToBeforeTheFault(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		dir := filepath.Join(t.TempDir(), "ckpt")
		k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: "a1", RunID: "r", Hold: time.Hour})
		save := func(s int) {
			t.Helper()
			write(t, dir, "model.bin", "weights at step "+string(rune('0'+s)))
			k.Said(s)
			if !k.WaitFor(ctx, s, 30*time.Second) {
				t.Fatalf("step %d not kept", s)
			}
		}
		save(1)
		save(2)
		var since time.Time
		for since.IsZero() || !time.Now().After(since) { // a clock that moved on
			since = time.Now()
		}
		save(3)
		write(t, dir, "model.bin", "weights at step 4") // kept as the attempt ends
		if got := k.Close(ctx); got != 3 && got != 4 {
			t.Fatalf("kept step %d, want 3 or 4", got)
		}
		if got := k.Distrust(ctx, since); got != 2 {
			t.Fatalf("Distrust: back to step %d, want 2", got)
		}
		os.RemoveAll(dir)
		m, err := Restore(ctx, st, "t", dir)
		if err != nil || m == nil || m.Step != 2 || read(t, filepath.Join(dir, "model.bin")) != "weights at step 2" {
			t.Fatalf("restored %+v (%v), want step 2's copy", m, err)
		}

		// A fault before every copy it kept: back to the start, and nothing kept after.
		dir2 := filepath.Join(t.TempDir(), "ckpt")
		k = Start(ctx, Options{Store: st, Trial: "u", Dir: dir2, Every: time.Hour, Writer: "a1", RunID: "r", Hold: time.Hour})
		before := time.Now().Add(-time.Second)
		write(t, dir2, "model.bin", "weights at step 1")
		k.Said(1)
		if !k.WaitFor(ctx, 1, 30*time.Second) {
			t.Fatal("step 1 not kept")
		}
		if got := k.Distrust(ctx, before); got != -1 {
			t.Errorf("Distrust: back to step %d, want -1 (its start)", got)
		}
		write(t, dir2, "model.bin", "weights at step 2")
		k.Close(ctx)
		if m, err := Read(ctx, st, "u"); err != nil || m != nil {
			t.Errorf("kept %+v (%v) after Distrust, want none", m, err)
		}
	})
}

// TestHeldCopiesDroppedAtTheEnd: the copies a keeper holds for a late fault are dropped
// once the run says it ends (Options.Held), before Hold has passed: it leaves no version no
// manifest names.
func TestHeldCopiesDroppedAtTheEnd(t *testing.T) {
	root, dir := t.TempDir(), filepath.Join(t.TempDir(), "ckpt")
	var held []func()
	k := Start(ctx, Options{Store: NewDir(root), Trial: "t", Dir: dir, Every: time.Hour, Writer: "a1", RunID: "r",
		Hold: time.Hour, Held: func(drop func()) { held = append(held, drop) }})
	for s := 1; s <= 3; s++ {
		write(t, dir, "model.bin", "weights at step "+string(rune('0'+s)))
		k.Said(s)
		if !k.WaitFor(ctx, s, 30*time.Second) {
			t.Fatalf("step %d not kept", s)
		}
	}
	k.Close(ctx)
	versions := func() int {
		entries, err := os.ReadDir(filepath.Join(root, "t"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if e.IsDir() {
				n++
			}
		}
		return n
	}
	if n := versions(); n != 3 {
		t.Fatalf("%d versions kept before the end, want 3: the newest, and the two it holds", n)
	}
	if len(held) != 1 {
		t.Fatalf("Held called %d times, want once", len(held))
	}
	held[0]()
	if n := versions(); n != 1 {
		t.Errorf("%d versions kept after the end, want the newest alone", n)
	}
}
