package checkpoint

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/runall/runall/internal/plainname"
)

// What a manifest says is read back from a store that others may write (another runall, a
// person, an attacker with the bucket's keys): every value of it that becomes a path or an
// object key is a plain name, or a link that stays inside the checkpoint directory, or the
// manifest is refused with its file named.

// checkName refuses s, a value of the store's (what names it), unless it is one plain name
// (plainname.Why): it names a folder of the store.
func checkName(what, s string) error {
	if why := plainname.Why(s); why != "" {
		return fmt.Errorf("%s %q is not a plain name (%s)", what, s, why)
	}
	return nil
}

// checkLink reports why a link at name (slash-separated, relative to the checkpoint
// directory) to target cannot be kept as a link ("" when it can): target must stay inside
// the directory once resolved against the link's folder.
func checkLink(name, target string) string {
	switch {
	case !filepath.IsLocal(filepath.FromSlash(name)) || strings.ContainsRune(name, 0):
		return "its name leaves the directory"
	case target == "" || strings.ContainsRune(target, 0):
		return "it has no target"
	case path.IsAbs(target) || filepath.IsAbs(target):
		return "its target is an absolute path"
	case !filepath.IsLocal(filepath.Join(filepath.Dir(filepath.FromSlash(name)), filepath.FromSlash(target))):
		return "its target leaves the directory"
	}
	return ""
}

// check refuses a manifest any of whose names would leave the store's folder of its trial,
// or whose links would leave the checkpoint directory; where is the manifest's file.
func (m Manifest) check(where string) error {
	errs := []error{checkName("version", m.Version), checkName("writer", m.Writer)}
	if m.Base != "" {
		errs = append(errs, checkName("base", m.Base))
	}
	if m.From != nil {
		errs = append(errs, checkName("from.trial", m.From.Trial))
	}
	for name, target := range m.Links {
		if why := checkLink(name, target); why != "" {
			errs = append(errs, fmt.Errorf("link %q to %q: %s", name, target, why))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w (runall writes no such value: the file was written by something else)", where, err)
		}
	}
	return nil
}
