package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// A claim says who holds a trial, its lease and when it was renewed, but a claim is data
// read from a shared store: a lease far longer than the sweep's (one running to 2099) or a
// renewal dated in the future would hold the trial until every runall is killed. Expiry is
// judged on this runall's clock, from when it saw the claim last change, with no lease
// longer than the sweep's; the claim's own dates are only shown.

// trusted is how long a claim holds without a change as this runall trusts it: its lease,
// but never more than the sweep's (sweep.json), and the sweep's for a claim that names none
// (not runall's). why says what was not trusted, "" when nothing.
func (s *Sweep) trusted(c claimBody) (lease time.Duration, why string) {
	limit := s.lease
	switch {
	case c.LeaseMS <= 0:
		return limit, "it names no lease"
	case c.LeaseMS > limit.Milliseconds():
		// Compared as written: a lease_ms past MaxInt64 ns would overflow as a duration.
		return limit, fmt.Sprintf("its lease of %s is longer than the sweep's %v", leaseText(c.LeaseMS), limit)
	}
	return max(time.Duration(c.LeaseMS)*time.Millisecond, time.Millisecond), ""
}

// leaseText is a lease_ms as it reads: a duration where one holds it, else its milliseconds.
func leaseText(ms int64) string {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Sprintf("%d ms", ms)
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// Hold is what this runall knows of a claim another runall holds.
type Hold struct {
	Owner Owner // zero when the claim is not a runall claim
	// Until is when this runall may take it over unless it changes meanwhile (its clock).
	Until time.Time
	// Lease is the lease it is trusted with.
	Lease time.Duration
	// Distrust says what of the claim is not trusted ("" when nothing): a lease longer than
	// the sweep's, a renewal dated in the future, a body that is not a runall claim.
	Distrust string
	// Mine is set when the claim is this runall's own: it took the trial since it listed.
	Mine bool
}

// String says who holds it until when, and what is not trusted, for a runall that waits.
func (h Hold) String() string {
	who := "an unknown holder"
	if h.Owner != (Owner{}) {
		who = h.Owner.String()
	}
	s := fmt.Sprintf("held by %s until %s unless renewed (lease %v)", who, h.Until.Format("15:04:05"), h.Lease)
	if h.Distrust != "" {
		s += "; not trusted: " + h.Distrust
	}
	return s
}

// Holder reads the claim on key, which another runall holds: who, and until when as this
// runall sees it. It is one GET; the claim's change is noted as a listing's would be.
func (s *Sweep) Holder(ctx context.Context, key string) (Hold, error) {
	body, etag, err := s.store.Get(ctx, claimDir+key+".json")
	if err != nil {
		return Hold{}, err
	}
	var c claimBody
	var why []string
	if err := json.Unmarshal(body, &c); err != nil {
		c = claimBody{}
		why = append(why, "it is not a runall claim")
	}
	lease, distrust := s.trusted(c)
	if distrust != "" && c.LeaseMS > 0 {
		why = append(why, distrust)
	}
	s.mu.Lock()
	now := s.opts.Now()
	w, ok := s.watched[key]
	if !ok || w.etag != etag {
		w = watch{etag: etag, since: now}
		s.watched[key] = w
	}
	s.mu.Unlock()
	if c.RenewedAt.After(now.Add(lease)) {
		why = append(why, "its renewal is dated "+c.RenewedAt.UTC().Format(time.RFC3339)+", in the future")
	}
	return Hold{Owner: c.Owner, Until: w.since.Add(lease), Lease: lease, Distrust: strings.Join(why, "; "),
		Mine: c.Owner == s.opts.Owner}, nil
}
