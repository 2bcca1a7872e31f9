package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Read returns trial's kept manifest; nil when none is kept. A manifest that names a path
// that would leave its place is refused, its file named.
func Read(ctx context.Context, st Store, trial string) (*Manifest, error) {
	body, _, err := st.ReadManifest(ctx, trial)
	if err != nil || body == nil {
		return nil, err
	}
	m, err := decodeManifest(manifestAt(st, trial), body)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Restore makes dir hold trial's kept checkpoint and returns its manifest; a link in
// dir's place is refused (ErrLinkDir), never replaced. With none kept
// it returns nil and leaves dir as it is: runall never deletes what it holds no copy of
// (Empty does, under --fresh, as asked). The copy is fetched beside dir, its links made,
// and renamed into its place, so that dir is never half restored. A copy dropped while it
// was fetched (a newer one landed) is fetched again.
func Restore(ctx context.Context, st Store, trial, dir string) (*Manifest, error) {
	if err := refuseLink(dir); err != nil {
		return nil, err
	}
	for range 4 {
		m, err := Read(ctx, st, trial)
		if err != nil {
			return nil, err
		}
		if m == nil { // made when absent, as a restore would; never emptied
			return nil, os.MkdirAll(dir, 0o755)
		}
		staging := dir + ".runall-restore-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		err = st.Get(ctx, trial, m.Version, staging)
		if err == nil {
			err = relink(staging, m.Links)
		}
		if err == nil {
			err = swap(staging, dir)
		}
		if err == nil {
			return m, nil
		}
		_ = removeAll(staging)
		if ctx.Err() != nil {
			return nil, err
		}
		if again, _ := Read(ctx, st, trial); again == nil || again.Version == m.Version {
			return nil, fmt.Errorf("restore %s%s (named by %s) into %s: %w", st.Where(trial), m.Version, manifestAt(st, trial), dir, err)
		}
	}
	return nil, fmt.Errorf("restore %s into %s: newer copies kept landing while it was fetched", st.Where(trial), dir)
}

// Empty makes dir an empty directory: --fresh, where the trial is to start over from
// nothing, as asked. A link in dir's place is refused (ErrLinkDir), never removed.
func Empty(dir string) error {
	if err := refuseLink(dir); err != nil {
		return err
	}
	if err := removeAll(dir); err != nil {
		return fmt.Errorf("empty checkpoint directory %s: %w", dir, err)
	}
	return os.MkdirAll(dir, 0o755)
}

// Holds is how many files and links dir holds (0: none, or no dir).
func Holds(dir string) int {
	s, _ := scanDir(dir)
	return len(s.files) + len(s.links)
}

// relink makes the copy's links in staging (a store keeps none), through an os.Root of it:
// their names and targets were checked to stay inside when the manifest was read. A file
// the copy holds where a link was is kept (a copy that took the link's target as a file).
func relink(staging string, links map[string]string) error {
	if err := os.MkdirAll(staging, 0o755); err != nil { // a checkpoint of no file
		return err
	}
	r, err := os.OpenRoot(staging)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, name := range slices.Sorted(maps.Keys(links)) {
		n := filepath.FromSlash(name)
		if err := r.MkdirAll(filepath.Dir(n), 0o755); err != nil {
			return err
		}
		if err := r.Symlink(filepath.FromSlash(links[name]), n); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// swap puts staging, a folder beside dir, in dir's place, through an os.Root of their
// parent: dir itself is replaced, never what a link at dir points to.
func swap(staging, dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	r, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.RemoveAll(filepath.Base(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return r.Rename(filepath.Base(staging), filepath.Base(dir))
}

// removeAll removes path, runall's own (a staging or scratch folder, or a directory it
// was told to empty), through an os.Root of its parent: a link at path is removed, never
// followed.
func removeAll(path string) error {
	r, err := os.OpenRoot(filepath.Dir(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return r.RemoveAll(filepath.Base(path))
}

// Forget drops everything kept for trial (--fresh: it starts over, as asked).
func Forget(ctx context.Context, st Store, trial string) error {
	return st.Drop(ctx, trial, "")
}

// Copy starts trial to from trial from's kept checkpoint (population-based training's
// exploit): from's copy becomes a new version of to, named by to's manifest whatever it
// held, with From saying whose it is. to then resumes from it like from its own.
func Copy(ctx context.Context, st Store, from, to, writer, scratch string) (*Manifest, error) {
	m, err := Read(ctx, st, from)
	if err != nil || m == nil {
		return nil, cmpErr(err, fmt.Errorf("copy the checkpoint of %s: none is kept (%s)", from, st.Where(from)))
	}
	tmp, err := os.MkdirTemp(scratch, "runall-copy-")
	if err != nil {
		return nil, err
	}
	defer removeAll(tmp) //nolint:errcheck // a scratch folder of runall's own
	dir := filepath.Join(tmp, "ckpt")
	if err := st.Get(ctx, from, m.Version, dir); err != nil {
		return nil, fmt.Errorf("copy the checkpoint of %s: %w", from, err)
	}
	c := *m
	c.Trial, c.Writer, c.Base, c.SavedAt = to, writer, "", time.Now().UTC()
	c.Version = versionName(m.Step, writer, 0) + "-from-" + strings.ReplaceAll(from, "/", "-")
	c.From = &Origin{Trial: from, Step: m.Step}
	if err := st.Put(ctx, dir, to, c.Version); err != nil {
		return nil, fmt.Errorf("copy the checkpoint of %s to %s: %w", from, to, err)
	}
	if err := replace(ctx, st, to, c); err != nil {
		_ = st.Drop(ctx, to, c.Version) // named by no manifest
		return nil, fmt.Errorf("copy the checkpoint of %s to %s: %w", from, to, err)
	}
	return &c, nil
}

// replace makes c trial's manifest whatever it named, and drops the version it named. A
// manifest that cannot be read is refused, not replaced: its file is named.
func replace(ctx context.Context, st Store, trial string, c Manifest) error {
	for range 8 {
		body, tag, err := st.ReadManifest(ctx, trial)
		if err != nil {
			return err
		}
		var old Manifest
		if body != nil {
			if old, err = decodeManifest(manifestAt(st, trial), body); err != nil {
				return err
			}
		}
		if err = st.WriteManifest(ctx, trial, c.encode(), tag); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			return err
		}
		if body != nil && old.Version != c.Version {
			_ = st.Drop(ctx, trial, old.Version)
		}
		return nil
	}
	return errors.New("its manifest was written by others at every try")
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// ParseLine reads a runall-checkpoint line: "runall-checkpoint step=N", or the word alone
// (the trial's current step, step -1). ok is false for any other line.
func ParseLine(line string) (step int, ok bool, err error) {
	rest, found := strings.CutPrefix(strings.TrimLeft(line, " \t"), LinePrefix)
	if !found || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, false, nil
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return -1, true, nil
	}
	v, cut := strings.CutPrefix(f[0], "step=")
	n, perr := strconv.Atoi(v)
	if !cut || perr != nil || n < 0 || len(f) > 1 {
		return 0, true, fmt.Errorf("%q: want %s step=N (N the steps the checkpoint holds), or %s alone", line, LinePrefix, LinePrefix)
	}
	return n, true, nil
}

// LinePrefix starts the line a script prints once its checkpoint is saved whole.
const LinePrefix = "runall-checkpoint"
