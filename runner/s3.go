package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

// syncer runs the task file's S3 transfers: downloads before the first task, uploads
// periodically while tasks run, after each task that has its own, and at the end.
type syncer struct {
	client *s3sync.Client
	spec   plan.S3Spec
	// mu serialises transfers to one destination, so that a periodic upload and the final
	// one never race over the same objects.
	mu       sync.Mutex
	dest     map[string]*sync.Mutex
	stop     context.CancelFunc
	periodic sync.WaitGroup
}

// startSync connects to S3, runs the downloads and starts the periodic uploads. A failed
// download stops the run before any task starts.
func (r *run) startSync(ctx context.Context) error {
	if !r.plan.HasTransfers() {
		return nil
	}
	spec := plan.S3Spec{}
	if r.plan.S3 != nil {
		spec = *r.plan.S3
	}
	env := r.baseEnv()
	lookup := getenv(env)
	client, err := s3sync.NewClient(ctx, s3sync.ClientOptions{
		Endpoint: os.Expand(spec.Endpoint, lookup), Region: os.Expand(spec.Region, lookup), Getenv: lookup,
	})
	if err != nil {
		return fmt.Errorf("s3: %w", err)
	}
	r.sync = &syncer{client: client, spec: spec, dest: map[string]*sync.Mutex{}}
	dctx, stop := r.halt.download(ctx)
	defer stop()
	for _, d := range spec.Download {
		if err := r.transfer(dctx, d, env, "download"); err != nil {
			return fmt.Errorf("%s: download %s: %w", d.Pos, os.Expand(d.From, lookup), err)
		}
	}
	pctx, cancel := context.WithCancel(ctx)
	r.sync.stop = cancel
	for _, u := range spec.Upload {
		if u.Every <= 0 {
			continue
		}
		r.sync.periodic.Add(1)
		go func() {
			defer r.sync.periodic.Done()
			t := time.NewTicker(u.Every)
			defer t.Stop()
			for {
				select {
				case <-pctx.Done():
					return
				case <-t.C:
					if err := r.transfer(pctx, u, env, "upload"); err != nil && pctx.Err() == nil {
						r.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("periodic upload of %s failed (will retry): %v", u.From, err)})
					}
				}
			}
		}()
	}
	return nil
}

// finishSync stops the periodic uploads and runs every upload once more, whatever the
// outcome of the tasks: a stopped or failed run keeps its outputs.
func (r *run) finishSync() error {
	if r.sync == nil {
		return nil
	}
	if r.sync.stop != nil {
		r.sync.stop()
		r.sync.periodic.Wait()
	}
	env := r.baseEnv()
	ctx, cancel := r.halt.finalUpload(r.ledger.stoppedBy() != 0, r.opts.Grace)
	defer cancel()
	var firstErr error
	for _, u := range r.sync.spec.Upload {
		// After a signal, the grace period at most; a second signal gives up at once.
		if err := r.transfer(ctx, u, env, "upload"); err != nil {
			if ctx.Err() != nil && r.ledger.stoppedBy() != 0 {
				// The stop's bound ended it (--grace, or a second signal): said, and the
				// exit code stays the signal's.
				r.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf(
					"%s: upload %s: not complete: ended by the stop (--grace %v, or a second signal)", u.Pos, u.From, r.opts.Grace)})
				continue
			}
			err = fmt.Errorf("%s: upload %s: %w", u.Pos, u.From, err)
			r.emit(event.Event{Kind: event.SyncProgress, Line: err.Error()})
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// uploadAfter runs a task's own uploads when it ends, and records a trial that succeeded and
// whose outputs landed, so that a rerun skips it.
func (r *run) uploadAfter(ctx context.Context, t *plan.Task, ok bool) {
	if r.sync == nil || len(t.Upload) == 0 && !(ok && r.isTrial(t)) {
		return
	}
	env := r.taskEnv(t, r.baseEnv(), nil)
	uploaded := true
	for _, u := range t.Upload {
		if err := r.transfer(ctx, u, env, "upload"); err != nil {
			uploaded = false
			r.emit(event.Event{Kind: event.SyncProgress, Task: t, Line: fmt.Sprintf("upload of %s failed: %v", u.From, err)})
		}
	}
	if ok && uploaded && r.isTrial(t) {
		if url := r.markerURL(t, env); url != "" {
			body, _ := json.Marshal(map[string]any{"task": t.Name, "cmd": r.mask.Replace(t.Cmd), "run_id": r.id, "finished_at": time.Now()})
			if err := r.sync.client.PutObject(ctx, url, body); err != nil {
				r.emit(event.Event{Kind: event.SyncProgress, Task: t, Line: "could not record completion: " + err.Error()})
			}
		}
	}
}

// transfer runs one download or upload.
func (r *run) transfer(ctx context.Context, tr plan.Transfer, env []string, direction string) error {
	src, err := expandStrict(tr.From, env)
	if err != nil {
		return fmt.Errorf("from: %w", err)
	}
	dst, err := expandStrict(tr.To, env)
	if err != nil {
		return fmt.Errorf("to: %w", err)
	}
	if direction == "upload" {
		if err := plan.CheckDeleteRoot(tr, dst); err != nil {
			return err
		}
	}
	if !strings.HasPrefix(src, "s3://") {
		src = r.taskPath(src)
	}
	if !strings.HasPrefix(dst, "s3://") {
		dst = r.taskPath(dst)
	}
	if direction == "upload" {
		if _, err := os.Stat(src); os.IsNotExist(err) {
			return nil // nothing written yet
		}
	}
	exclude := tr.Exclude
	if direction == "upload" {
		// Resume markers live under upload destinations. They are runall's, not the
		// directory's: excluded, an upload with delete: true leaves them alone.
		exclude = append(slices.Clone(exclude), markerDir)
	}
	lock := r.sync.lockFor(dst)
	lock.Lock()
	defer lock.Unlock()
	// Live: the sync line follows the transfer. Plain: a line at --status-every, only for
	// a transfer that lasts that long.
	var lastLine time.Time
	every := time.Second / 4
	if r.opts.Mode != output.Live {
		every, lastLine = r.opts.StatusEvery, time.Now()
	}
	st, err := r.sync.client.Sync(ctx, src, dst, s3sync.Options{
		Exclude: exclude, Delete: tr.Delete, Extract: tr.Extract,
		Progress: func(p s3sync.Progress) {
			if time.Since(lastLine) >= every {
				lastLine = time.Now()
				r.emit(event.Event{Kind: event.SyncProgress, Line: direction + " " + src + ": " + s3sync.FormatProgress(p)})
			}
		},
	})
	if err != nil {
		return err
	}
	r.met.transferred(direction, st.Files, st.Bytes)
	r.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("%s %s -> %s: %s", direction, src, dst, st.String())})
	return nil
}

func (s *syncer) lockFor(dst string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.dest[dst]
	if !ok {
		m = &sync.Mutex{}
		s.dest[dst] = m
	}
	return m
}

// isTrial reports whether t is a child of a parallel block.
func (r *run) isTrial(t *plan.Task) bool { return r.trials[t] }

// markerDir holds the resume markers under an upload destination.
const markerDir = ".runall-done"

// markerURL is where a finished trial is recorded: beside its own upload when it has one,
// else under the task file's first upload destination. "" when there is nowhere to record.
// It is named by the trial's Key, which is unique in the plan: two trials with the same
// name and command in different places have markers of their own.
func (r *run) markerURL(t *plan.Task, env []string) string {
	key := trialKey(t) + ".json"
	for _, u := range t.Upload {
		if to, err := expandStrict(u.To, env); err == nil && strings.HasPrefix(to, "s3://") {
			return strings.TrimSuffix(to, "/") + "/" + markerDir + "/" + key
		}
	}
	if r.sync != nil && len(r.sync.spec.Upload) > 0 {
		if to, err := expandStrict(r.sync.spec.Upload[0].To, env); err == nil {
			return strings.TrimSuffix(to, "/") + "/" + markerDir + "/" + key
		}
	}
	return ""
}

// resumeSkip reports whether a trial was recorded as done by an earlier run.
func (r *run) resumeSkip(ctx context.Context, t *plan.Task) (string, bool) {
	if r.opts.Fresh || r.sync == nil || r.claims != nil {
		return "", false // with claims, the sweep's done records say what is left
	}
	url := r.markerURL(t, r.taskEnv(t, r.baseEnv(), nil))
	if url == "" {
		return "", false
	}
	done, err := r.sync.client.Exists(ctx, url)
	if err != nil || !done {
		return "", false
	}
	return "done in an earlier run (" + url + "; --fresh runs it again)", true
}
