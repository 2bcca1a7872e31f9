package claims

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/runall/runall/s3sync"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
)

// The objects under a sweep's prefix.
const (
	sweepKey   = "sweep.json"   // the task file's identity, written by the first runall
	claimDir   = "claims/"      // claims/<trial>.json: who holds a trial, renewed while it runs
	doneDir    = DoneDir        // done/<trial>.json: how a trial ended, written once
	ResultsKey = "results.json" // the merged results, written when every trial is done
)

// Owner says which runall holds a claim or wrote a record.
type Owner struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	RunID string `json:"run_id"`
}

func (o Owner) String() string { return fmt.Sprintf("%s pid %d (run %s)", o.Host, o.PID, o.RunID) }

// Identity is what decides a sweep's trials: a file with other trials is another sweep.
type Identity struct {
	Hash   string `json:"hash"`
	File   string `json:"file"`
	Trials int    `json:"trials"`
}

// Options configures a Sweep.
type Options struct {
	Identity Identity
	Owner    Owner
	// Lease is how long a claim holds without renewal; it is renewed every third of it.
	Lease time.Duration
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

// Sweep is one runall's view of a shared queue of trials.
type Sweep struct {
	store *counted
	opts  Options
	nonce string // tells this process's writes from others', through retries
	// lease is the sweep's, as sweep.json records it: every runall of the sweep takes its
	// claims with it, and no claim's is trusted beyond it (holder.go).
	lease time.Duration

	mu      sync.Mutex
	seq     int
	done    map[string]bool    // trials recorded as done
	watched map[string]watch   // others' claims: the ETag seen and since when
	records map[string]*Record // records read or written, by trial
}

// watch is another runall's claim as seen: unchanged for a lease, it has expired. Expiry is
// judged by this process's clock alone, never by comparing two machines' clocks.
type watch struct {
	etag  string
	since time.Time
}

// claimBody is a claim object.
type claimBody struct {
	Owner     Owner     `json:"owner"`
	Token     string    `json:"token"` // unique per write
	LeaseMS   int64     `json:"lease_ms"`
	RenewedAt time.Time `json:"renewed_at"` // for people; expiry does not read it
	ExpiresAt time.Time `json:"expires_at"` // renewed_at plus the lease, for people too
}

// Record is how a trial ended, written once under done/.
type Record struct {
	Key        string          `json:"key"`
	Failed     bool            `json:"failed"` // failed for good (not ignored)
	Owner      Owner           `json:"owner"`
	Token      string          `json:"token"`
	FinishedAt time.Time       `json:"finished_at"`
	Result     json.RawMessage `json:"result,omitempty"` // the runner's own record of the trial
}

// DoneDir is where a trial's record is under the prefix: done/<trial>.json.
const DoneDir = "done/"

// ErrTaken is a trial that another runall holds under a live claim.
var ErrTaken = errors.New("claimed by another runall")

// ErrDone is a trial already recorded as done.
var ErrDone = errors.New("already done")

// ErrOtherSweep is a prefix that holds the claims of another task file.
var ErrOtherSweep = errors.New("the prefix holds another sweep")

// Requests is how many requests this Sweep made so far.
func (s *Sweep) Requests() Counts { return s.store.counts() }

// Lease is the lease this runall takes its claims with.
func (s *Sweep) Lease() time.Duration { return s.opts.Lease }

func (s *Sweep) token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s-%d", s.nonce, s.seq)
}

func (s *Sweep) claimBody(token string) []byte {
	now := s.opts.Now().UTC()
	b, _ := json.Marshal(claimBody{Owner: s.opts.Owner, Token: token,
		LeaseMS: s.opts.Lease.Milliseconds(), RenewedAt: now, ExpiresAt: now.Add(s.opts.Lease)})
	return b
}

// View is the state of the queue as of the last Refresh.
type View struct {
	Done    map[string]bool // recorded as done
	Claimed map[string]bool // a claim exists (held or expired)
}

// Refresh lists the done records and the claims, and notes when each claim last changed.
func (s *Sweep) Refresh(ctx context.Context) (View, error) {
	done, err := s.store.List(ctx, doneDir)
	if err != nil {
		return View{}, err
	}
	claimed, err := s.store.List(ctx, claimDir)
	if err != nil {
		return View{}, err
	}
	v := View{Done: map[string]bool{}, Claimed: map[string]bool{}}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range done {
		k = strings.TrimSuffix(k, ".json")
		v.Done[k], s.done[k] = true, true
	}
	for k, etag := range claimed {
		k = strings.TrimSuffix(k, ".json")
		v.Claimed[k] = true
		if w, ok := s.watched[k]; !ok || w.etag != etag {
			s.watched[k] = watch{etag: etag, since: now}
		}
	}
	return v, nil
}

// Stale reports whether another runall's claim on key has gone a whole lease (this
// runall's) without a renewal as far as this process has seen: worth a closer look.
func (s *Sweep) Stale(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watched[key]
	return ok && s.opts.Now().Sub(w.since) > s.opts.Lease
}

// expired reports whether the claim body, with this ETag, may be taken over.
func (s *Sweep) expired(key, etag string, c claimBody) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	w, ok := s.watched[key]
	if !ok || w.etag != etag {
		s.watched[key] = watch{etag: etag, since: now}
		return false
	}
	lease, _ := s.trusted(c)
	return now.Sub(w.since) > lease
}

// Claim takes trial key: by creating its claim (also after its holder gave it back by
// deleting it), or by taking over one that expired. It returns ErrTaken when another runall holds it, ErrDone when it is recorded
// as done, and other errors when the store could not be reached (try again later).
func (s *Sweep) Claim(ctx context.Context, key string) (*Lease, error) {
	s.mu.Lock()
	done := s.done[key]
	s.mu.Unlock()
	if done {
		return nil, ErrDone
	}
	token := s.token()
	ck := claimDir + key + ".json"
	etag, body, cur, err := s.putOrRead(ctx, ck, s.claimBody(token), s3sync.Condition{IfNoneMatch: true}, token)
	if err == nil {
		return s.newLease(key, etag), nil
	}
	if !errors.Is(err, s3sync.ErrPrecondition) {
		return nil, err
	}
	if body == nil { // the object changed again, or went, since the write lost
		if body, cur, err = s.store.Get(ctx, ck); err != nil {
			return nil, err
		}
	}
	// A claim that is not runall's (torn, foreign) is one whose holder is unknown: it is
	// taken over as an expired one is, once it stayed the same for the sweep's lease.
	var c claimBody
	_ = json.Unmarshal(body, &c)
	if !s.expired(key, cur, c) {
		return nil, fmt.Errorf("%w: %s", ErrTaken, c.Owner)
	}
	etag, err = s.put(ctx, ck, s.claimBody(token), s3sync.Condition{IfMatch: cur}, token)
	if errors.Is(err, s3sync.ErrPrecondition) {
		return nil, fmt.Errorf("%w: taken over by another runall first", ErrTaken)
	}
	if err != nil {
		return nil, err
	}
	l := s.newLease(key, etag)
	// Its holder may have recorded it just before its claim expired.
	if _, _, err := s.store.Get(ctx, doneDir+key+".json"); err == nil || !errors.Is(err, s3sync.ErrNotExist) {
		l.stop()
		if err == nil {
			s.markDone(key)
			return nil, ErrDone
		}
		return nil, err
	}
	return l, nil
}

// put writes under cond; a write that lost its condition because an earlier try of the same
// write (retried by the SDK after a lost response) won is a success.
func (s *Sweep) put(ctx context.Context, key string, body []byte, cond s3sync.Condition, token string) (string, error) {
	etag, _, _, err := s.putOrRead(ctx, key, body, cond, token)
	return etag, err
}

// putOrRead is put that, when the write lost to another's, also returns the object it read
// to tell (nil when it could not be read), which saves a claimant a second request.
func (s *Sweep) putOrRead(ctx context.Context, key string, body []byte, cond s3sync.Condition, token string) (etag string, cur []byte, curETag string, err error) {
	etag, err = s.store.Put(ctx, key, body, cond)
	if !errors.Is(err, s3sync.ErrPrecondition) {
		return etag, nil, "", err
	}
	got, gotETag, gerr := s.store.Get(ctx, key)
	if gerr != nil {
		return "", nil, "", err
	}
	var t struct{ Token string }
	if json.Unmarshal(got, &t) == nil && t.Token == token {
		return gotETag, nil, "", nil
	}
	return "", got, gotETag, err
}

func (s *Sweep) markDone(key string) {
	s.mu.Lock()
	s.done[key] = true
	s.mu.Unlock()
}

// Records reads the done record of every trial in keys that has one, in the order of keys.
func (s *Sweep) Records(ctx context.Context, keys []string) ([]Record, error) {
	var out []Record
	for _, k := range keys {
		s.mu.Lock()
		rec, known, done := s.records[k], s.records[k] != nil, s.done[k]
		s.mu.Unlock()
		if !known && done {
			b, _, err := s.store.Get(ctx, doneDir+k+".json")
			if err != nil {
				return nil, err
			}
			rec = &Record{}
			if err := json.Unmarshal(b, rec); err != nil {
				return nil, fmt.Errorf("%s%s.json is not a runall record: %w", doneDir, k, err)
			}
			rec.Key = k // where it was read, whatever it says
			s.mu.Lock()
			s.records[k] = rec
			s.mu.Unlock()
		}
		if rec != nil {
			out = append(out, *rec)
		}
	}
	return out, nil
}

// Results returns the merged results under the prefix, or s3sync.ErrNotExist.
func (s *Sweep) Results(ctx context.Context) ([]byte, error) {
	b, _, err := s.store.Get(ctx, ResultsKey)
	return b, err
}

// WriteResults writes the merged results under the prefix, unless a runall that saw the
// same complete sweep wrote them first.
func (s *Sweep) WriteResults(ctx context.Context, body []byte) error {
	_, err := s.store.Put(ctx, ResultsKey, body, s3sync.Condition{IfNoneMatch: true})
	if errors.Is(err, s3sync.ErrPrecondition) {
		return nil
	}
	return err
}

func sortedKeys(seq iter.Seq[string]) []string {
	return slices.SortedFunc(seq, cmp.Compare)
}
