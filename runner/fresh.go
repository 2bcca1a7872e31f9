package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// freshState is what a --fresh run leaves in the log directory's state while it runs
// (fresh.json): the sweep is fresh from its start on. A run that ends without finishing
// what it had (a signal, stop-on-failure, a crash) leaves it there, and the next run,
// --fresh or not, finishes the sweep fresh: what earlier runs kept from before that start
// (a resume marker, a kept checkpoint) is stale, what the fresh runs kept since is not.
type freshState struct {
	logDir string
	since  time.Time // zero: nothing kept is stale (no --fresh run is unfinished)
	note   string    // what the run says of it at its start; "" when nothing
}

// freshRecord is fresh.json.
type freshRecord struct {
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
}

const freshFile = "fresh.json"

// openFresh is the run's freshState: under --fresh (fresh), recorded as starting now; else
// the one an unfinished --fresh run left, said. One that cannot be read or written is
// said, and the run goes on as asked.
func openFresh(logDir, runID string, fresh bool) *freshState {
	s := &freshState{logDir: logDir}
	root, err := os.OpenRoot(logDir)
	if err != nil {
		return s
	}
	defer root.Close()
	name := filepath.Join("state", freshFile)
	if fresh {
		s.since = time.Now()
		body, _ := json.Marshal(freshRecord{RunID: runID, StartedAt: s.since})
		if err := errors.Join(root.MkdirAll("state", 0o755), root.WriteFile(name, body, 0o644)); err != nil {
			s.note = fmt.Sprintf("--fresh: could not record the fresh start in %s (%v): a stop now is not remembered", filepath.Join(logDir, name), err)
		}
		return s
	}
	b, err := root.ReadFile(name)
	var rec freshRecord
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s
	case err == nil:
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.StartedAt.IsZero() {
		s.note = fmt.Sprintf("%s cannot be read (%v): delete it, or run with --fresh to start every trial over", filepath.Join(logDir, name), err)
		return s
	}
	s.since = rec.StartedAt
	s.note = fmt.Sprintf("the sweep is half fresh: run %s with --fresh (started %s) did not finish; this run finishes it fresh: "+
		"what was kept before that start (resume markers, checkpoints) is not resumed from", rec.RunID, rec.StartedAt.Format(time.RFC3339))
	return s
}

// stale reports whether something kept at when is older than the unfinished fresh start.
func (s *freshState) stale(when time.Time) bool {
	return s != nil && !s.since.IsZero() && when.Before(s.since)
}

// finished forgets the fresh start once a run ended having run all it had: the sweep is
// fresh through.
func (s *freshState) finished() {
	if s == nil || s.since.IsZero() {
		return
	}
	if root, err := os.OpenRoot(s.logDir); err == nil {
		_ = root.Remove(filepath.Join("state", freshFile))
		root.Close()
	}
}
