package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/miniotest"
	"github.com/runall/runall/s3sync"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

var ctx = context.Background()

// NewS3 makes the S3 store (runner/checkpoint/s3store, which imports this package: its
// test, s3store_test.go, sets it) that stores runs each test against.
var NewS3 func(c *s3sync.Client, prefix, stateDir string) (Store, error)

// stores runs a test against a local directory and against a real MinIO.
func stores(t *testing.T, test func(t *testing.T, st Store)) {
	t.Run("dir", func(t *testing.T) { test(t, NewDir(t.TempDir())) })
	t.Run("minio", func(t *testing.T) {
		srv := miniotest.Shared(t)
		bucket := srv.NewBucket(t)
		env := map[string]string{}
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		c, err := s3sync.NewClient(ctx, s3sync.ClientOptions{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewS3(c, "s3://"+bucket+"/sweep/checkpoints/", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		test(t, st)
	})
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// attempt runs one attempt of trial "t" that saves a model at each of steps, reports each
// step's loss, and ends; it returns the step kept. A copy that may not be kept is waited
// for a moment only.
func attempt(t *testing.T, st Store, dir, writer string, base *Manifest, steps ...int) int {
	t.Helper()
	k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: writer, RunID: "r", Base: base})
	for _, s := range steps {
		k.Metric("loss", 1/float64(s), s)
		write(t, dir, "model.bin", "weights at step "+string(rune('0'+s)))
		k.Said(s)
		wait := 30 * time.Second
		if base == nil && writer != "a1" {
			wait = 300 * time.Millisecond // a fresh attempt after a1: refused
		}
		if !k.WaitFor(ctx, s, wait) {
			break
		}
	}
	return k.Close(ctx)
}

// TestKeepAndRestore (issue 27, point 1): the newest copy is kept with the step it holds
// and its series, and restored into the directory before the next attempt.
func TestKeepAndRestore(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		dir := filepath.Join(t.TempDir(), "ckpt")
		if m, err := Restore(ctx, st, "t", dir); err != nil || m != nil {
			t.Fatalf("Restore with none kept: %v, %v", m, err)
		}
		if got := attempt(t, st, dir, "a1", nil, 1, 2, 3); got != 3 {
			t.Fatalf("kept step %d, want 3", got)
		}
		os.RemoveAll(dir) // the Pod's disk is gone
		m, err := Restore(ctx, st, "t", dir)
		if err != nil || m == nil {
			t.Fatalf("Restore: %v, %v", m, err)
		}
		if m.Step != 3 || read(t, filepath.Join(dir, "model.bin")) != "weights at step 3" {
			t.Errorf("restored step %d with %q, want step 3's", m.Step, read(t, filepath.Join(dir, "model.bin")))
		}
		if pts := m.Series["loss"]; len(pts) != 3 || pts[2] != (Point{3, 1.0 / 3}) {
			t.Errorf("series %v, want the three losses", m.Series)
		}
	})
}

// TestNeverOverwrittenByOlder (issue 27, point 2): a fresh attempt (one that did not resume)
// or an older one never replaces a newer kept copy; the attempt that resumed from it does.
func TestNeverOverwrittenByOlder(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		dir := filepath.Join(t.TempDir(), "ckpt")
		attempt(t, st, dir, "a1", nil, 1, 2, 3, 4, 5, 6)
		fresh := filepath.Join(t.TempDir(), "ckpt")
		if got := attempt(t, st, fresh, "a2", nil, 1); got != -1 {
			t.Errorf("a fresh attempt's step 1 was kept over step 6 (landed %d)", got)
		}
		if m, _ := Read(ctx, st, "t"); m == nil || m.Step != 6 || m.Writer != "a1" {
			t.Fatalf("kept %+v, want a1's step 6", m)
		}
		resumed := filepath.Join(t.TempDir(), "ckpt")
		base, err := Restore(ctx, st, "t", resumed)
		if err != nil {
			t.Fatal(err)
		}
		if got := attempt(t, st, resumed, "a3", base, 7); got != 7 {
			t.Errorf("the resumed attempt's step 7 was not kept (landed %d)", got)
		}
		m, _ := Read(ctx, st, "t")
		if m.Step != 7 || m.Base != base.Version || len(m.Series["loss"]) != 7 {
			t.Errorf("kept %+v, want step 7 resumed from %s with 7 losses", m, base.Version)
		}
	})
}

// tearing is a store whose Put changes the directory while it copies it, as a script that
// writes its checkpoint while runall copies it does.
type tearing struct {
	Store
	dir   string
	times int
}

func (s *tearing) Put(ctx context.Context, dir, trial, version string) error {
	err := s.Store.Put(ctx, dir, trial, version)
	if s.times > 0 {
		s.times--
		os.WriteFile(filepath.Join(s.dir, "model.bin"), []byte("half written"), 0o644)
	}
	return err
}

// TestNeverTorn (issue 27, point 1): a directory that changed while it was copied is not
// kept; the manifest names only a copy of a directory that held still.
func TestNeverTorn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	st := &tearing{Store: NewDir(t.TempDir()), dir: dir, times: 1}
	k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: "a1", RunID: "r"})
	write(t, dir, "model.bin", "whole")
	k.Said(1)
	if k.WaitFor(ctx, 1, 300*time.Millisecond) {
		t.Fatal("a copy that changed while it was taken was kept")
	}
	if m, _ := Read(ctx, st, "t"); m != nil {
		t.Fatalf("manifest %+v names a torn copy", m)
	}
	k.Said(1) // the script says it again once its directory is whole
	if !k.WaitFor(ctx, 1, 30*time.Second) {
		t.Fatal("the whole directory was not kept")
	}
	k.Close(ctx)
	restored := filepath.Join(t.TempDir(), "r")
	if _, err := Restore(ctx, st, "t", restored); err != nil || read(t, filepath.Join(restored, "model.bin")) != "half written" {
		t.Errorf("restored %v: want what the directory held when it was whole", err)
	}
}

// TestStepFromChanges: without runall-checkpoint lines, a copy holds the steps reported
// before the directory last changed.
func TestStepFromChanges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	st := NewDir(t.TempDir())
	k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: 20 * time.Millisecond, Writer: "a1", RunID: "r"})
	for s := 1; s <= 2; s++ {
		k.Metric("loss", 1, s)
		write(t, dir, "model.bin", "step "+string(rune('0'+s)))
		if !k.WaitFor(ctx, s, 30*time.Second) {
			t.Fatalf("step %d: no copy landed (landed %d)", s, k.Landed())
		}
		time.Sleep(2 * saveThenPrint) // the next step is reported well after this save
	}
	k.Metric("loss", 1, 3) // reported, not saved
	if got := k.Close(ctx); got != 2 {
		t.Errorf("landed %d, want 2: step 3 was reported after the last save", got)
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line    string
		step    int
		ok, bad bool
	}{
		{"runall-checkpoint step=7", 7, true, false},
		{"  runall-checkpoint", -1, true, false},
		{"runall-checkpoint 7", 0, true, true},
		{"runall-checkpoint step=-1", 0, true, true},
		{"runall-checkpoints step=1", 0, false, false},
		{"epoch 7", 0, false, false},
	}
	for _, tc := range tests {
		step, ok, err := ParseLine(tc.line)
		if step != tc.step || ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("ParseLine(%q) = %d, %v, %v", tc.line, step, ok, err)
		}
	}
}

// TestCopy: population-based training's exploit starts one trial from another's copy.
func TestCopy(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		dir := filepath.Join(t.TempDir(), "ckpt")
		attempt(t, st, dir, "a1", nil, 1, 2)
		m, err := Copy(ctx, st, "t", "u", "x1", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		into := filepath.Join(t.TempDir(), "u")
		got, err := Restore(ctx, st, "u", into)
		if err != nil || got == nil || got.From == nil || *got.From != (Origin{"t", 2}) || got.Version != m.Version {
			t.Fatalf("restored %+v, %v: want t's step 2", got, err)
		}
		if read(t, filepath.Join(into, "model.bin")) != "weights at step 2" {
			t.Errorf("u holds %q", read(t, filepath.Join(into, "model.bin")))
		}
	})
}
