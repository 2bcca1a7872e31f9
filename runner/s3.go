package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/s3sync"
)

// transfers runs the task file's S3 transfers: downloads before the first task, uploads
// periodically while tasks run, after each task that has its own, and at the end. A nil
// *transfers (no transfer in the task file), or one that could not connect, does nothing.
type transfers struct {
	client *s3sync.Client // nil until start connects
	spec   plan.S3Spec
	o      transferOptions
	// mu serialises transfers to one destination, so that a periodic upload and the final
	// one never race over the same objects.
	mu       sync.Mutex
	dest     map[string]*sync.Mutex
	stop     context.CancelFunc
	periodic sync.WaitGroup
}

// transferOptions is what the transfers take from the run.
type transferOptions struct {
	life   *lifecycle
	met    *prom.Metrics
	mask   *mask.Masker
	conn   *s3Conn             // the run's one S3 client
	base   []string            // the run's environment (baseEnv)
	dir    string              // the task file's directory, for relative paths
	runID  string              // recorded in resume markers
	trials map[*plan.Task]bool // the children of parallel blocks: whose end is recorded
	resume bool                // skip trials earlier runs recorded as done
	fresh  *freshState         // markers older than an unfinished --fresh start are stale
	show   transferShow
	stop   transferStop
}

// transferShow is how a transfer's progress is shown.
type transferShow struct {
	live  bool          // progress follows a transfer (the live view)
	every time.Duration // plain output: a progress line at most this often
}

// transferStop is how a stop of the run reaches the transfers.
type transferStop struct {
	halt    *stopping
	grace   time.Duration // how long the final uploads may take after a signal
	stopped func() bool   // whether a signal stopped the run
}

// newTransfers is the plan's transfers, not started; nil when it has none.
func newTransfers(p *plan.Plan, o transferOptions) *transfers {
	if !p.HasTransfers() {
		return nil
	}
	spec := plan.S3Spec{}
	if p.S3 != nil {
		spec = *p.S3
	}
	return &transfers{spec: spec, o: o, dest: map[string]*sync.Mutex{}}
}

// start connects to S3, runs the downloads and starts the periodic uploads. A failed
// download stops the run before any task starts; the final uploads still run.
func (s *transfers) start(ctx context.Context) error {
	if s == nil {
		return nil
	}
	lookup := getenv(s.o.base)
	client, err := s.o.conn.get(ctx)
	if err != nil {
		return fmt.Errorf("s3: %w", err)
	}
	s.client = client
	dctx, stop := s.o.stop.halt.untilStop(ctx)
	defer stop()
	for _, d := range s.spec.Download {
		if err := s.transfer(dctx, d, s.o.base, "download"); err != nil {
			return fmt.Errorf("%s: download %s: %w", d.Pos, os.Expand(d.From, lookup), err)
		}
	}
	s.startPeriodic(ctx)
	return nil
}

// startPeriodic starts the uploads with an every:.
func (s *transfers) startPeriodic(ctx context.Context) {
	pctx, cancel := context.WithCancel(ctx)
	s.stop = cancel
	for _, u := range s.spec.Upload {
		if u.Every <= 0 {
			continue
		}
		s.periodic.Add(1)
		go func() {
			defer s.periodic.Done()
			t := time.NewTicker(u.Every)
			defer t.Stop()
			for {
				select {
				case <-pctx.Done():
					return
				case <-t.C:
					if err := s.transfer(pctx, u, s.o.base, "upload"); err != nil && pctx.Err() == nil {
						s.o.life.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("periodic upload of %s failed (will retry): %v", u.From, err)})
					}
				}
			}
		}()
	}
}

// finish stops the periodic uploads and runs every upload once more, whatever the
// outcome of the tasks: a stopped or failed run keeps its outputs.
func (s *transfers) finish() error {
	if s == nil || s.client == nil {
		return nil
	}
	if s.stop != nil {
		s.stop()
		s.periodic.Wait()
	}
	ctx, cancel := s.o.stop.halt.finalUpload(s.o.stop.stopped(), s.o.stop.grace)
	defer cancel()
	var firstErr error
	for _, u := range s.spec.Upload {
		// After a signal, the grace period at most; a second signal gives up at once.
		if err := s.transfer(ctx, u, s.o.base, "upload"); err != nil {
			if ctx.Err() != nil && s.o.stop.stopped() {
				// The stop's bound ended it (--grace, or a second signal): said, and the
				// exit code stays the signal's.
				s.o.life.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf(
					"%s: upload %s: not complete: ended by the stop (--grace %v, or a second signal)", u.Pos, u.From, s.o.stop.grace)})
				continue
			}
			err = fmt.Errorf("%s: upload %s: %w", u.Pos, u.From, err)
			s.o.life.emit(event.Event{Kind: event.SyncProgress, Line: err.Error()})
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// uploadAfter runs a task's own uploads when it ends, and records a trial that succeeded and
// whose outputs landed, so that a rerun skips it.
func (s *transfers) uploadAfter(ctx context.Context, t *plan.Task, ok bool) {
	if s == nil || s.client == nil || len(t.Upload) == 0 && !(ok && s.o.trials[t]) {
		return
	}
	env := plan.TaskVars(t, s.o.base)
	uploaded := true
	for _, u := range t.Upload {
		if err := s.transfer(ctx, u, env, "upload"); err != nil {
			// The trial stays ok, its record says what did not land (upload_errors), and the
			// run fails, as a file-level upload's failure fails it: its outputs are not there.
			uploaded = false
			s.o.life.emit(event.Event{Kind: event.SyncProgress, Task: t, Line: fmt.Sprintf("upload of %s failed: %v", u.From, err),
				Reason: fmt.Sprintf("%s: upload %s: %v", u.Pos, u.From, err)})
			s.o.life.fail(false)
		}
	}
	if ok && uploaded && s.o.trials[t] {
		if url := s.markerURL(t, env); url != "" {
			body, _ := json.Marshal(map[string]any{"task": t.Name, "cmd": s.o.mask.Replace(t.Cmd), "run_id": s.o.runID, "finished_at": time.Now()})
			if err := s.client.PutObject(ctx, url, body); err != nil {
				s.o.life.emit(event.Event{Kind: event.SyncProgress, Task: t, Line: "could not record completion: " + err.Error()})
			}
		}
	}
}

// transfer runs one download or upload.
func (s *transfers) transfer(ctx context.Context, tr plan.Transfer, env []string, direction string) error {
	src, dst, err := s.ends(tr, env, direction)
	if err != nil || src == "" {
		return err
	}
	exclude := tr.Exclude
	if direction == "upload" {
		// Resume markers and kept checkpoints live under upload destinations. They are
		// runall's, not the directory's: excluded, an upload with delete: true leaves them alone.
		exclude = append(slices.Clone(exclude), markerDir, checkpointDir)
	}
	lock := s.lockFor(dst)
	lock.Lock()
	defer lock.Unlock()
	// Live: the sync line follows the transfer. Plain: a line at --status-every, only for
	// a transfer that lasts that long.
	var lastLine time.Time
	every := time.Second / 4
	if !s.o.show.live {
		every, lastLine = s.o.show.every, time.Now()
	}
	st, err := s.client.Sync(ctx, src, dst, s3sync.Options{
		Exclude: exclude, Delete: tr.Delete, WholeBucket: tr.WholeBucket, Extract: tr.Extract,
		Progress: func(p s3sync.Progress) {
			if time.Since(lastLine) >= every {
				lastLine = time.Now()
				s.o.life.emit(event.Event{Kind: event.SyncProgress, Line: direction + " " + src + ": " + s3sync.FormatProgress(p)})
			}
		},
	})
	if err != nil {
		return err
	}
	s.o.met.Transferred(direction, st.Files, st.Bytes)
	s.o.life.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("%s %s -> %s: %s", direction, src, dst, st.String())})
	return nil
}

// ends expands a transfer's source and destination; src is "" for an upload of what was
// not written yet.
func (s *transfers) ends(tr plan.Transfer, env []string, direction string) (src, dst string, err error) {
	src, err = plan.ExpandStrictEnv(tr.From, env)
	if err != nil {
		return "", "", fmt.Errorf("from: %w", err)
	}
	dst, err = plan.ExpandStrictEnv(tr.To, env)
	if err != nil {
		return "", "", fmt.Errorf("to: %w", err)
	}
	if direction == "upload" {
		if err := plan.CheckDeleteRoot(tr, dst); err != nil {
			return "", "", err
		}
	}
	if !strings.HasPrefix(src, "s3://") {
		src = plan.TaskPath(s.o.dir, src)
	}
	if !strings.HasPrefix(dst, "s3://") {
		dst = plan.TaskPath(s.o.dir, dst)
	}
	if direction == "upload" {
		if _, err := os.Stat(src); os.IsNotExist(err) {
			return "", "", nil // nothing written yet
		}
	}
	return src, dst, nil
}

func (s *transfers) lockFor(dst string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.dest[dst]
	if !ok {
		m = &sync.Mutex{}
		s.dest[dst] = m
	}
	return m
}

// markerDir holds the resume markers under an upload destination.
const markerDir = ".runall-done"

// markerURL is where a finished trial is recorded: beside its own upload when it has one,
// else under the task file's first upload destination. "" when there is nowhere to record.
// It is named by the trial's Key, which is unique in the plan: two trials with the same
// name and command in different places have markers of their own.
func (s *transfers) markerURL(t *plan.Task, env []string) string {
	key := plan.Key(t) + ".json"
	for _, u := range t.Upload {
		if to, err := plan.ExpandStrictEnv(u.To, env); err == nil && strings.HasPrefix(to, "s3://") {
			return strings.TrimSuffix(to, "/") + "/" + markerDir + "/" + key
		}
	}
	if len(s.spec.Upload) > 0 {
		if to, err := plan.ExpandStrictEnv(s.spec.Upload[0].To, env); err == nil {
			return strings.TrimSuffix(to, "/") + "/" + markerDir + "/" + key
		}
	}
	return ""
}

// resumeSkip reports whether a trial was recorded as done by an earlier run.
// Without o.resume (--fresh, or claims, whose done records say what is left) none was.
func (s *transfers) resumeSkip(ctx context.Context, t *plan.Task) (string, bool) {
	if s == nil || s.client == nil || !s.o.resume {
		return "", false
	}
	url := s.markerURL(t, plan.TaskVars(t, s.o.base))
	if url == "" {
		return "", false
	}
	done, err := s.client.Exists(ctx, url)
	if err != nil || !done || s.o.fresh.since.IsZero() {
		return "done in an earlier run (" + url + "; --fresh runs it again)", err == nil && done
	}
	body, _, err := s.client.Get(ctx, url, 1<<16)
	var marker struct {
		FinishedAt time.Time `json:"finished_at"`
	}
	if err != nil || json.Unmarshal(body, &marker) != nil || s.o.fresh.stale(marker.FinishedAt) {
		return "", false // done before the unfinished --fresh start: it runs fresh
	}
	return "done since the unfinished --fresh start (" + url + "; --fresh runs it again)", true
}

// uploadResults puts the results, the samples and the report under the first upload
// destination, where `runall report s3://...` finds every shard's.
func (s *transfers) uploadResults(body []byte, runID, logDir string, emit func(event.Event)) {
	if s == nil || s.client == nil || len(s.spec.Upload) == 0 {
		return
	}
	to, err := plan.ExpandStrictEnv(s.spec.Upload[0].To, s.o.base)
	if err != nil || !strings.HasPrefix(to, "s3://") {
		return
	}
	base := results.RunURL(to, runID)
	ctx, cancel := s.o.stop.halt.finalUpload(s.o.stop.stopped(), s.o.stop.grace)
	defer cancel()
	ctx, cancelMinute := context.WithTimeout(ctx, time.Minute)
	defer cancelMinute()
	files := map[string][]byte{ResultsFile: body}
	for _, name := range []string{results.SamplesFile, ReportFile} {
		b, err := os.ReadFile(filepath.Join(logDir, name))
		if err == nil {
			files[name] = b
		} else if !errors.Is(err, fs.ErrNotExist) {
			emit(event.Event{Kind: event.SyncProgress, Line: "cannot read " + name + ": " + err.Error()})
		}
	}
	for name, b := range files {
		if err := s.client.PutObject(ctx, base+name, b); err != nil {
			emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("could not upload the run's %s: %v", name, err)})
			return
		}
	}
	emit(event.Event{Kind: event.SyncProgress, Line: "results uploaded to " + base})
}
