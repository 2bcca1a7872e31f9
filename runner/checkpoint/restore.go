package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Read returns trial's kept manifest; nil when none is kept.
func Read(ctx context.Context, st Store, trial string) (*Manifest, error) {
	body, _, err := st.ReadManifest(ctx, trial)
	if err != nil || body == nil {
		return nil, err
	}
	m, err := decodeManifest(trial, body)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Restore makes dir hold trial's kept checkpoint and returns its manifest; with none kept
// it empties dir (the trial starts fresh, from nothing earlier left there) and returns nil.
// The copy is fetched beside dir and renamed into its place, so that dir is never half
// restored. A copy dropped while it was fetched (a newer one landed) is fetched again.
func Restore(ctx context.Context, st Store, trial, dir string) (*Manifest, error) {
	for range 4 {
		m, err := Read(ctx, st, trial)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, empty(dir)
		}
		staging := dir + ".runall-restore-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		err = st.Get(ctx, trial, m.Version, staging)
		if err == nil {
			err = swap(staging, dir)
		}
		if err == nil {
			return m, nil
		}
		_ = os.RemoveAll(staging)
		if ctx.Err() != nil {
			return nil, err
		}
		if again, _ := Read(ctx, st, trial); again == nil || again.Version == m.Version {
			return nil, fmt.Errorf("restore %s%s into %s: %w", st.Where(trial), m.Version, dir, err)
		}
	}
	return nil, fmt.Errorf("restore %s into %s: newer copies kept landing while it was fetched", st.Where(trial), dir)
}

// empty makes dir an empty directory.
func empty(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("empty checkpoint directory %s: %w", dir, err)
	}
	return os.MkdirAll(dir, 0o755)
}

// swap puts staging in dir's place.
func swap(staging, dir string) error {
	if err := os.MkdirAll(staging, 0o755); err != nil { // a checkpoint of no file
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(staging, dir)
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
	defer os.RemoveAll(tmp)
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
	for range 8 {
		body, tag, err := st.ReadManifest(ctx, to)
		if err != nil {
			return nil, err
		}
		if err = st.WriteManifest(ctx, to, c.encode(), tag); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			return nil, err
		}
		if old, derr := decodeManifest(to, body); body != nil && derr == nil && old.Version != c.Version {
			_ = st.Drop(ctx, to, old.Version)
		}
		return &c, nil
	}
	return nil, fmt.Errorf("copy the checkpoint of %s to %s: its manifest was written by others at every try", from, to)
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
