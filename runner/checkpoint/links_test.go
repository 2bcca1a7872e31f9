package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLinksKeptAsLinks (issue 34, rule 2, second bullet): a link whose target stays inside
// the checkpoint directory (Lightning's save_last="link") is kept as a link, in the local
// store and in S3 (which keeps no links: the manifest does), and made again on restore; a
// link that leaves the directory, and a named pipe, are left out, and said to be, once.
func TestLinksKeptAsLinks(t *testing.T) {
	stores(t, func(t *testing.T, st Store) {
		outside := t.TempDir()
		write(t, outside, "secret", "not the trial's")
		dir := filepath.Join(t.TempDir(), "ckpt")
		var mu sync.Mutex
		var said []string
		k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: time.Hour, Writer: "a1", RunID: "r",
			Say: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }})
		write(t, dir, "epoch=3.ckpt", "weights 3")
		write(t, filepath.Join(dir, "sub"), "x", "x")
		links := map[string]string{
			"last.ckpt":      "epoch=3.ckpt",
			"sub/up.ckpt":    "../epoch=3.ckpt",
			"abs.ckpt":       filepath.Join(dir, "epoch=3.ckpt"), // inside: kept relative
			"leaves":         filepath.Join(outside, "secret"),
			"leaves-up.ckpt": "../../" + filepath.Base(filepath.Dir(outside)) + "/" + filepath.Base(outside) + "/secret",
		}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		k.Said(3)
		if !k.WaitFor(ctx, 3, 30*time.Second) {
			t.Fatal("no copy was kept")
		}
		k.Said(3) // again, unchanged: not said twice
		k.Close(ctx)
		into := filepath.Join(t.TempDir(), "back")
		if _, err := Restore(ctx, st, "t", into); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"last.ckpt": "epoch=3.ckpt", "sub/up.ckpt": "../epoch=3.ckpt", "abs.ckpt": "epoch=3.ckpt"} {
			got, err := os.Readlink(filepath.Join(into, name))
			if err != nil || got != want {
				t.Errorf("%s restored as %q, %v: want a link to %s", name, got, err, want)
			}
		}
		if read(t, filepath.Join(into, "last.ckpt")) != "weights 3" {
			t.Error("last.ckpt does not reach the checkpoint it names")
		}
		for _, name := range []string{"leaves", "leaves-up.ckpt", "pipe"} {
			if _, err := os.Lstat(filepath.Join(into, name)); err == nil {
				t.Errorf("%s was kept", name)
			}
		}
		mu.Lock()
		all := strings.Join(said, "\n")
		mu.Unlock()
		if strings.Count(all, "left out of the copy") != 1 {
			t.Errorf("want the entries left out said once:\n%s", all)
		}
		for _, want := range []string{"leaves (a link to", "its target leaves the directory", "pipe (a named pipe (FIFO))"} {
			if !strings.Contains(all, want) {
				t.Errorf("the output does not say %q:\n%s", want, all)
			}
		}
	})
}

// TestLinkDirRefused: a checkpoint directory that is itself a symbolic link was never
// looked inside (nothing kept, nothing said) and a restore replaced the link with a
// directory. It is said once while the keeper looks at it, and a restore or --fresh's
// emptying refuses it, naming it and what to do; the link and what it leads to stay.
func TestLinkDirRefused(t *testing.T) {
	st := NewDir(t.TempDir())
	elsewhere := t.TempDir()
	write(t, elsewhere, "model.bin", "weights")
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var said []string
	k := Start(ctx, Options{Store: st, Trial: "t", Dir: dir, Every: 10 * time.Millisecond, Writer: "a1", RunID: "r",
		Say: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }})
	time.Sleep(100 * time.Millisecond) // several looks
	k.Said(1)
	if got := k.Close(ctx); got != -1 {
		t.Errorf("kept step %d through a link, want none", got)
	}
	mu.Lock()
	all := strings.Join(said, "\n")
	mu.Unlock()
	if strings.Count(all, "is a symbolic link") != 1 || !strings.Contains(all, dir) || !strings.Contains(all, "remove the link") {
		t.Errorf("want the link said once, with the directory and what to do:\n%s", all)
	}
	if m, err := Restore(ctx, st, "t", dir); !errors.Is(err, ErrLinkDir) || m != nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Restore through a link: %v, %v; want ErrLinkDir naming %s", m, err, dir)
	}
	if err := Empty(dir); !errors.Is(err, ErrLinkDir) {
		t.Errorf("Empty through a link: %v, want ErrLinkDir", err)
	}
	if target, err := os.Readlink(dir); err != nil || target != elsewhere {
		t.Errorf("the link is now %q, %v; want it left leading to %s", target, err, elsewhere)
	}
	if read(t, filepath.Join(elsewhere, "model.bin")) != "weights" {
		t.Error("what the link leads to changed")
	}
}
