package claims

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/runall/runall/s3sync"
)

// sweepBody is sweep.json: the sweep's identity, who started it, and the lease every runall
// of it takes its claims with.
type sweepBody struct {
	Identity
	CreatedBy Owner     `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	LeaseMS   int64     `json:"lease_ms,omitempty"`
}

// ErrLeaseDiffers is a runall whose lease is not the sweep's: its claims would be taken
// over before it renews them, or others' trusted for longer than they are held.
var ErrLeaseDiffers = errors.New("this runall's lease is not the sweep's")

// MaxLease is the longest lease a sweep takes: a claim lost with its Pod holds its trial that
// long, and a longer one would overflow the times that are fractions of it.
const MaxLease = 24 * time.Hour

// Open joins the sweep under store: it records the identity and the lease there when it is
// the first, and refuses a prefix that holds another file's sweep, a sweep.json that is not
// runall's, or a sweep whose lease differs from opts.Lease.
func Open(ctx context.Context, store Store, opts Options) (*Sweep, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lease <= 0 || opts.Lease > MaxLease {
		return nil, fmt.Errorf("claims: a lease of %v is out of range: give one between 1ms and %v", opts.Lease, MaxLease)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	s := &Sweep{store: &counted{Store: store}, opts: opts, lease: opts.Lease,
		done: map[string]bool{}, watched: map[string]watch{}, records: map[string]*Record{}}
	s.w = &writer{store: s.store, opts: &s.opts, nonce: hex.EncodeToString(b)}
	body, _ := json.Marshal(sweepBody{Identity: opts.Identity, CreatedBy: opts.Owner, CreatedAt: opts.Now().UTC(),
		LeaseMS: opts.Lease.Milliseconds()})
	_, err := s.store.Put(ctx, sweepKey, body, s3sync.Condition{IfNoneMatch: true})
	if err == nil || !errors.Is(err, s3sync.ErrPrecondition) {
		return s, err
	}
	got, _, err := s.store.Get(ctx, sweepKey)
	if err != nil {
		return nil, err
	}
	theirs, err := readSweep(got)
	if err != nil {
		return nil, err
	}
	if theirs.Hash != opts.Identity.Hash {
		return nil, fmt.Errorf("%w: %s (%d trials) started it on %s at %s, and this file's trials differ; "+
			"give this file a prefix of its own, or delete the prefix's objects to start over", ErrOtherSweep,
			theirs.File, theirs.Trials, theirs.CreatedBy.Host, theirs.CreatedAt.Format(time.RFC3339))
	}
	// A sweep.json written before it recorded the lease: its runalls are taken to use this one's.
	s.lease = cmp.Or(time.Duration(theirs.LeaseMS)*time.Millisecond, opts.Lease)
	if s.lease != opts.Lease {
		return nil, fmt.Errorf("%w: %s records a lease of %v (%s started the sweep with it), this runall's is %v; "+
			"give every runall of the sweep the same --lease", ErrLeaseDiffers, sweepKey, s.lease, theirs.CreatedBy, opts.Lease)
	}
	return s, nil
}

// readSweep reads sweep.json; one that is not runall's (torn, or another program's) is
// refused as another sweep would be, saying what to do, rather than read again forever.
func readSweep(got []byte) (sweepBody, error) {
	var theirs sweepBody
	err := json.Unmarshal(got, &theirs)
	switch {
	case err != nil:
	case theirs.Hash == "":
		err = errors.New("it names no sweep's hash")
	case theirs.LeaseMS < 0 || theirs.LeaseMS > MaxLease.Milliseconds():
		// Its value as written: as a duration it would overflow.
		err = fmt.Errorf("its lease_ms %d is out of range (0 to %d, %v)", theirs.LeaseMS, MaxLease.Milliseconds(), MaxLease)
	}
	if err != nil {
		return theirs, fmt.Errorf("%w: %s under the prefix is not runall's (%w): "+
			"delete it (the next runall to join writes it again), or give this file another prefix",
			ErrOtherSweep, sweepKey, err)
	}
	return theirs, nil
}
