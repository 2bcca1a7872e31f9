// Package checkpoint keeps a trial's checkpoint directory where every runall of a sweep
// reaches it, and restores it before the trial starts again. A kept checkpoint is a
// version (a copy of the directory's files) and a manifest that names it and the step it
// holds; the manifest is written last and conditionally, so that a reader never sees a
// torn copy and an older or fresh attempt never replaces a newer one. It knows trials
// only by their identity (a string) and nothing of task files or the scheduler.
//
// One trial's checkpoint as it is kept:
//
//	the script writes DIR ──▶ Keeper scans it (every, or at a runall-checkpoint line)
//	   changed and settled ──▶ Put DIR as a new version ──▶ scan again: changed? drop it
//	   ──▶ manifest: newer than the kept step (or its own, or the one it resumed from)?
//	       write it If-Match ──▶ drop the old version            otherwise: drop the new one
//	   changing at every look, 5 in a row ──▶ said once, with the remedy
//	a later attempt (requeue, pause, another Pod) ──▶ Restore: manifest, checked ──▶ Get
//	   ──▶ its links made ──▶ renamed into DIR's place;   none kept: DIR left as it is
//
// What a manifest names is data: a version, writer, base or origin that is not a plain
// name, or a link that leaves the directory, is refused with the manifest's file named
// (names.go), and the local store works only through an os.Root of its folder.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/runall/runall/runner/results"
)

// Manifest is the one pointer to a trial's kept checkpoint.
//
//limits:flat manifest.json as stored, one field per key: sub-structs would nest the JSON that runalls of one sweep, old and new, read from each other.
type Manifest struct {
	Trial   string    `json:"trial"`   // the trial's identity
	Step    int       `json:"step"`    // the step the copy holds: the trial's steps before it
	Version string    `json:"version"` // the folder beside the manifest that holds the files
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	Writer  string    `json:"writer"`         // the attempt that kept it (run id, trial, attempt)
	Base    string    `json:"base,omitempty"` // the version that attempt resumed from
	RunID   string    `json:"run_id"`
	SavedAt time.Time `json:"saved_at"`
	// Series is the trial's metric values up to Step, so that a resumed trial's series is
	// whole on any runall of the sweep.
	Series map[string][]Point `json:"series,omitempty"`
	// Resumes are the steps the trial was resumed at before this copy was kept.
	Resumes []results.Resume `json:"resumes,omitempty"`
	// From is set on a copy of another trial's checkpoint (population-based training).
	From *Origin `json:"from,omitempty"`
	// Links are the symbolic links the copy holds, by their path in the directory (slash
	// separated), each to a target inside it: kept here, as S3 keeps no links, and made
	// again on restore.
	Links map[string]string `json:"links,omitempty"`
}

// Point is one metric value at its step.
type Point struct {
	Step  int     `json:"step"`
	Value float64 `json:"value"`
}

// Origin is the trial (and its step) whose checkpoint another was started from.
type Origin struct {
	Trial string `json:"trial"`
	Step  int    `json:"step"`
}

// ManifestName is the manifest's name under a trial's folder, in every store.
const ManifestName = "manifest.json"

func (m Manifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ") // plain types: cannot fail
	return append(b, '\n')
}

// decodeManifest reads the manifest at where (the store's file, for messages), refusing
// one that names a path that would leave its place.
func decodeManifest(where string, b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w (delete it to start the trial over)", where, err)
	}
	if err := m.check(where); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// manifestAt is trial's manifest file in st, for messages.
func manifestAt(st Store, trial string) string { return st.Where(trial) + ManifestName }

// versionName names a new copy: its step first, so that a listing reads in order.
func versionName(step int, writer string, seq int64) string {
	return fmt.Sprintf("s%08d-%s-%x", step, writer, seq)
}

// replaces reports whether a copy of step by writer, which resumed from base, may replace
// the kept one: a newer step, its own earlier copy, or the copy it resumed from. An older
// attempt, a fresh one, or one whose claim another runall took never replaces a newer copy.
func (m Manifest) replacedBy(step int, writer, base string) bool {
	return step > m.Step || m.Writer == writer || (base != "" && m.Version == base && step >= m.Step)
}

// upTo is the series cut at step.
func upTo(series map[string][]Point, step int) map[string][]Point {
	var out map[string][]Point
	for name, pts := range series {
		var kept []Point
		for _, p := range pts {
			if p.Step <= step {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			if out == nil {
				out = map[string][]Point{}
			}
			out[name] = kept
		}
	}
	return out
}
