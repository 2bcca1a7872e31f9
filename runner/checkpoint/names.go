package checkpoint

import (
	"fmt"
	"maps"
	"slices"

	"github.com/runall/runall/internal/pathname"
)

// What a manifest says is read back from a store that others may write (another runall, a
// person, an attacker with the bucket's keys): every value of it that becomes a path or an
// object key is a plain name, or a link that stays inside the checkpoint directory once all
// its links are made, or the manifest is refused with its file named.

// checkName refuses s, a value of the store's (what names it), unless it is one plain name
// (pathname.WhyNotPlain): it names a folder of the store.
func checkName(what, s string) error {
	if why := pathname.WhyNotPlain(s); why != "" {
		return fmt.Errorf("%s %q is not a plain name (%s)", what, s, why)
	}
	return nil
}

// refusedLinks is each of links (slash-separated names relative to the checkpoint
// directory, to their targets) that cannot be made, with why: one rule with the archive
// extractor's (pathname.Links): each name and target must stay inside the directory as the
// kernel resolves them once all the links are made, through no other link of them.
func refusedLinks(links map[string]string) map[string]string {
	return pathname.Links(links).Refused()
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
	refused := refusedLinks(m.Links)
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		errs = append(errs, fmt.Errorf("link %q to %q: %s", name, m.Links[name], refused[name]))
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w (runall writes no such value: the file was written by something else)", where, err)
		}
	}
	return nil
}
