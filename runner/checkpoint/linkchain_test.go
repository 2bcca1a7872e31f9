package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chains are manifests' links that each pass the text's check link by link but, once all
// are made, put a link outside the checkpoint directory base/a/b/ckpt: at its top, through
// the link "a", to base/victim/file.txt; or to its parent, through "a" and "..".
var chains = map[string]map[string]string{
	"a name through an earlier link": {"a": ".", "a/a/a/step": "../../../victim/file.txt"},
	"a target through a link":        {"a": ".", "step": "a/../../../victim/file.txt"},
	"a link to the parent":           {"a": ".", "up": "a/.."},
}

// TestLinkChainsRefused (issue 42, point 1, first bullet): a kept copy whose manifest's links
// go through an earlier link is refused by the restore, with the manifest's file named, in the
// local store and in S3 alike, and the trial's next save (a write of step, and of up/x) lands
// nowhere outside its directory: the victim keeps its bytes.
func TestLinkChainsRefused(t *testing.T) {
	for name, links := range chains {
		t.Run(name, func(t *testing.T) {
			stores(t, func(t *testing.T, st Store) {
				base := t.TempDir()
				write(t, filepath.Join(base, "victim"), "file.txt", "precious")
				dir := filepath.Join(base, "a", "b", "ckpt")
				if attempt(t, st, dir, "a1", nil, 1) != 1 {
					t.Fatal("no copy was kept")
				}
				m, err := Read(ctx, st, "t")
				if err != nil || m == nil {
					t.Fatal(m, err)
				}
				m.Links = links
				body, _ := json.Marshal(m)
				plant(t, st, "t", body)
				_, err = Restore(ctx, st, "t", dir)
				if err == nil || !strings.Contains(err.Error(), manifestAt(st, "t")) || !strings.Contains(err.Error(), "leaves the directory") &&
					!strings.Contains(err.Error(), "goes through the link a") {
					t.Errorf("Restore: %v, want the manifest refused, its file named", err)
				}
				os.WriteFile(filepath.Join(dir, "step"), []byte("the trial's next save"), 0o644)          // the trial's next save
				os.WriteFile(filepath.Join(dir, "up", "victim", "file.txt"), []byte("through up"), 0o644) // or through up
				if got := read(t, filepath.Join(base, "victim", "file.txt")); got != "precious" {
					t.Errorf("the victim outside the directory now holds %q", got)
				}
			})
		})
	}
}

// TestLinkChainsLeftOutOfTheCopy: a directory that holds such links is kept without them (a
// restore would refuse the manifest that named them), and says so; the links that stay
// inside are kept.
func TestLinkChainsLeftOutOfTheCopy(t *testing.T) {
	st := NewDir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "ckpt")
	var mu sync.Mutex
	var said []string
	k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: "a1", RunID: "r",
		Say: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }})
	write(t, dir, "model.bin", "w")
	for name, target := range map[string]string{"a": ".", "up": "a/..", "last": "model.bin", "abs-up": dir + "/a/../x"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	k.Said(1)
	if !k.WaitFor(ctx, 1, 30*time.Second) {
		t.Fatal("no copy was kept")
	}
	k.Close(ctx)
	m, err := Read(ctx, st, "t")
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	if len(m.Links) != 2 || m.Links["a"] != "." || m.Links["last"] != "model.bin" {
		t.Errorf("links kept: %v, want a and last, not up nor abs-up (dir/a/../x is dir's parent's x, not dir/x)", m.Links)
	}
	mu.Lock()
	defer mu.Unlock()
	if all := strings.Join(said, "\n"); !strings.Contains(all, "up (a link to a/..: its target leaves the directory)") {
		t.Errorf("the output does not say up was left out:\n%s", all)
	}
}
