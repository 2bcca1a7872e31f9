package checkpoint

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/pathname"
)

// Tests of issue 34: the checkpoint store deletes, empties, replaces and writes only what
// it created, inside places it owns, whatever a stored manifest says.

// plant writes body as trial's manifest, over whatever is there.
func plant(t *testing.T, st Store, trial string, body []byte) {
	t.Helper()
	_, tag, err := st.ReadManifest(ctx, trial)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteManifest(ctx, trial, body, tag); err != nil {
		t.Fatal(err)
	}
}

// badManifests are manifests of trial "t" each with one value that resolves outside the
// trial's folder or the checkpoint directory: "../"-paths to another trial's folder and to
// victim, victim's absolute path, and links that leave.
func badManifests(victim string) map[string]Manifest {
	up := strings.Repeat("../", 16) + strings.TrimPrefix(victim, "/")
	ok := Manifest{Trial: "t", Step: 9, Version: "v1", Writer: "w1"}
	with := func(f func(*Manifest)) Manifest { m := ok; f(&m); return m }
	return map[string]Manifest{
		"version ../other":   with(func(m *Manifest) { m.Version = "../other" }),
		"version up":         with(func(m *Manifest) { m.Version = up }),
		"version absolute":   with(func(m *Manifest) { m.Version = victim }),
		"version empty":      with(func(m *Manifest) { m.Version = "" }),
		"writer up":          with(func(m *Manifest) { m.Writer = up }),
		"base ../other":      with(func(m *Manifest) { m.Base = "../other" }),
		"from ../other":      with(func(m *Manifest) { m.From = &Origin{Trial: "../other", Step: 1} }),
		"link target leaves": with(func(m *Manifest) { m.Links = map[string]string{"last.ckpt": up} }),
		"link target abs":    with(func(m *Manifest) { m.Links = map[string]string{"last.ckpt": victim} }),
		"link name leaves":   with(func(m *Manifest) { m.Links = map[string]string{"../../../x": "y"} }),
		"link through a link": with(func(m *Manifest) { // issue 42: as the kernel resolves it once made
			m.Links = map[string]string{"a": ".", "a/a/a/step": strings.Repeat("../", 3) + "x"}
		}),
		"link target through a link": with(func(m *Manifest) { m.Links = map[string]string{"a": ".", "up": "a/.."} }),
	}
}

// untouched fails t unless victim still holds its one file and trial "other" its copy.
func untouched(t *testing.T, st Store, victim string) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(victim, "precious")); err != nil || string(got) != "mine" {
		t.Fatalf("the victim directory was touched: %q, %v", got, err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if m, err := Restore(ctx, st, "other", back); err != nil || m == nil || read(t, filepath.Join(back, "model.bin")) != "other's" {
		t.Fatalf("another trial's kept copy was touched: %+v, %v", m, err)
	}
}

// TestManifestPathsStayInside (issue 34, rule 1, first bullet): every place of the store
// that deletes, empties, replaces or writes (Read, Restore and its swap, Copy either way, the
// keeper's naming of a new copy and drop of the old one, Put, Get, Drop) refuses a manifest
// whose version, writer, base, origin or links resolve outside their place, naming the
// manifest's file, and leaves a victim directory, another trial's copy and the checkpoint
// directory as they were.
func TestManifestPathsStayInside(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		victim := t.TempDir()
		write(t, victim, "precious", "mine")
		other := filepath.Join(t.TempDir(), "other")
		k := Start(ctx, Options{Store: st, Trial: "other", Dir: other, Every: time.Hour, Writer: "o1", RunID: "r"})
		write(t, other, "model.bin", "other's")
		k.Said(1)
		if !k.WaitFor(ctx, 1, 30*time.Second) {
			t.Fatal("trial other's copy was not kept")
		}
		k.Close(ctx)
		where := manifestAt(st, "t")
		for name, m := range badManifests(victim) {
			t.Run(name, func(t *testing.T) {
				body, _ := json.Marshal(m)
				plant(t, st, "t", body)
				dir := filepath.Join(t.TempDir(), "ckpt")
				write(t, dir, "mine", "the script's own")
				refused := func(what string, err error) {
					t.Helper()
					if err == nil || !strings.Contains(err.Error(), where) {
						t.Errorf("%s: %v, want an error naming %s", what, err, where)
					}
				}
				_, err := Read(ctx, st, "t")
				refused("Read", err)
				_, err = Restore(ctx, st, "t", dir)
				refused("Restore", err)
				_, err = Copy(ctx, st, "t", "u", "x1", t.TempDir())
				refused("Copy from t", err)
				_, err = Copy(ctx, st, "other", "t", "x2", t.TempDir())
				refused("Copy to t", err)
				var said []string
				k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: "w2", RunID: "r",
					Say: func(s string) { said = append(said, s) }})
				write(t, dir, "model.bin", "new")
				k.Said(10)
				if k.WaitFor(ctx, 10, 500*time.Millisecond) {
					t.Error("a copy was named over a manifest that could not be read")
				}
				k.Close(ctx)
				refused("the keeper", errorsOf(said))
				if read(t, filepath.Join(dir, "mine")) != "the script's own" {
					t.Error("the checkpoint directory was emptied")
				}
				for _, v := range []string{m.Version, m.Base, m.Writer} {
					if pathname.WhyNotPlain(v) == "" {
						continue
					}
					if st.Put(ctx, dir, "t", v) == nil || st.Get(ctx, "t", v, t.TempDir()) == nil {
						t.Errorf("the store took the version %q", v)
					}
					if v != "" && st.Drop(ctx, "t", v) == nil { // "": every version of t, as asked
						t.Errorf("the store dropped the version %q", v)
					}
				}
				untouched(t, st, victim)
			})
		}
		if err := Forget(ctx, st, "t"); err != nil {
			t.Fatal(err)
		}
		untouched(t, st, victim)
	})
}

// errorsOf is the keeper's lines as one error; nil when it said nothing.
func errorsOf(said []string) error {
	if len(said) == 0 {
		return nil
	}
	return &saidError{strings.Join(said, "\n")}
}

type saidError struct{ s string }

func (e *saidError) Error() string { return e.s }

// TestStoreLinksStayInside (issue 34, rule 1, first bullet): a link planted inside the
// local store, as a trial's folder or as a version named by a plain name, is never
// followed out of it: nothing is read from, copied into or removed under its target.
func TestStoreLinksStayInside(t *testing.T) {
	root := t.TempDir()
	st := NewDir(root)
	victim := t.TempDir()
	write(t, victim, "precious", "mine")
	body, _ := json.Marshal(Manifest{Trial: "t", Step: 3, Version: "evil", Writer: "w1"})
	plant(t, st, "t", body)
	if err := os.Symlink(victim, filepath.Join(root, "t", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(victim, "linked"), ManifestName, string(body))
	dir := filepath.Join(t.TempDir(), "ckpt")
	write(t, dir, "mine", "the script's own")
	if _, err := Restore(ctx, st, "t", dir); err == nil || !strings.Contains(err.Error(), manifestAt(st, "t")) {
		t.Errorf("Restore through a planted link: %v, want an error naming %s", err, manifestAt(st, "t"))
	}
	if _, err := Copy(ctx, st, "t", "u", "x1", t.TempDir()); err == nil {
		t.Error("Copy read through a planted link")
	}
	_ = attempt(t, st, dir, "w1", nil, 4) // names its copy, and drops "evil": the link, not its target
	for _, call := range []func() error{
		func() error { _, _, err := st.ReadManifest(ctx, "linked"); return err },
		func() error { return st.WriteManifest(ctx, "linked", body, "") },
		func() error { return st.Put(ctx, dir, "linked", "v") },
		func() error { return st.Get(ctx, "linked", "v", t.TempDir()) },
		func() error { return st.Drop(ctx, "linked", "v") },
		func() error { return st.Drop(ctx, "linked", "") },
	} {
		if err := call(); err == nil {
			t.Error("the store went through the link linked")
		}
	}
	if got, err := os.ReadFile(filepath.Join(victim, "precious")); err != nil || string(got) != "mine" {
		t.Fatalf("the victim was touched: %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 2 {
		t.Errorf("the victim holds %v, want precious and linked alone", entries)
	}
	if read(t, filepath.Join(dir, "mine")) != "the script's own" {
		t.Error("the checkpoint directory was emptied")
	}
}

// TestDirectoryWithoutCopyIsLeft (issue 34, rule 1, fourth bullet): with no kept copy, the
// directory is left as it is (the script may resume from its own files); Empty, under
// --fresh, empties it.
func TestDirectoryWithoutCopyIsLeft(t *testing.T) {
	st := NewDir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "ckpt")
	write(t, dir, "step-14.pt", "the script's own")
	if m, err := Restore(ctx, st, "t", dir); err != nil || m != nil {
		t.Fatalf("Restore with none kept: %v, %v", m, err)
	}
	if read(t, filepath.Join(dir, "step-14.pt")) != "the script's own" || Holds(dir) != 1 {
		t.Fatal("a directory runall holds no copy of was emptied")
	}
	if err := Empty(dir); err != nil {
		t.Fatal(err)
	}
	if Holds(dir) != 0 {
		t.Error("Empty left files")
	}
}

// TestRestlessDirectorySaid (issue 34, rule 1, fourth bullet): a directory that changes at
// every look (a log appended every 50 ms) is said once, with the remedy.
func TestRestlessDirectorySaid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	write(t, dir, "model.bin", "weights")
	var mu sync.Mutex
	var said []string
	k := Start(ctx, Options{Store: NewDir(t.TempDir()), Trial: "t", Dir: dir, Every: 20 * time.Millisecond, Writer: "a1", RunID: "r",
		Say: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, _ := os.OpenFile(filepath.Join(dir, "train.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		defer f.Close()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				f.WriteString("epoch line\n")
			}
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return strings.Count(strings.Join(said, "\n"), "changed at each of the last")
	}
	for deadline := time.Now().Add(20 * time.Second); count() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(20 * restlessLooks * 20 * time.Millisecond) // a good many looks more
	close(stop)
	<-done
	k.Close(context.Background())
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(said, "\n")
	if count := strings.Count(all, "changed at each of the last"); count != 1 {
		t.Fatalf("said %d times that the directory never holds still, want once:\n%s", count, all)
	}
	if !strings.Contains(all, "runall-checkpoint step=N") || !strings.Contains(all, "out of it") {
		t.Errorf("the remedy is not said:\n%s", all)
	}
}
