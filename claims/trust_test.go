package claims_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/s3sync"
)

// clock is a time a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestClaimsForeignSweepJSONRefused: a torn sweep.json, or one another program wrote, is
// refused at once (no waiting), as another sweep is, saying it is not runall's and what to do.
func TestClaimsForeignSweepJSONRefused(t *testing.T) {
	for _, body := range []string{`{"hash":"h1","file":"tas`, `["not", "runall"]`, `{"name":"another tool"}`, `null`} {
		stores(t, func(t *testing.T, st func() claims.Store) {
			if _, err := st().Put(ctx, "sweep.json", []byte(body), s3sync.Condition{}); err != nil {
				t.Fatal(err)
			}
			_, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml"}, Lease: time.Minute})
			msg := fmt.Sprint(err)
			if !errors.Is(err, claims.ErrOtherSweep) || !strings.Contains(msg, "sweep.json under the prefix is not runall's") ||
				!strings.Contains(msg, "delete it") || !strings.Contains(msg, "another prefix") {
				t.Errorf("sweep.json %s: got %v, want claims.ErrOtherSweep saying it is not runall's and what to do", body, err)
			}
		})
	}
}

// TestClaimsLeaseDiffersRefused: a runall whose lease is not the one sweep.json records is
// refused, naming both: its claims would be taken over before it renews them.
func TestClaimsLeaseDiffersRefused(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		open(t, st(), 1, time.Minute)
		_, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml", Trials: 3}, Lease: time.Hour})
		if !errors.Is(err, claims.ErrLeaseDiffers) || !strings.Contains(err.Error(), "a lease of 1m0s") || !strings.Contains(err.Error(), "1h0m0s") {
			t.Fatalf("got %v, want claims.ErrLeaseDiffers naming both leases", err)
		}
	})
}

// TestClaimsLeaseTo2099NotTrusted plants claims that would hold a trial until 2099 (a lease
// running to it, a renewal dated in it) and one that is not a runall claim at all: a runall
// that waits names the holder, until when, and what it does not trust, and takes each over
// once it stayed unchanged for the sweep's lease, not in 2099. Against MinIO too.
func TestClaimsLeaseTo2099NotTrusted(t *testing.T) {
	const lease = time.Minute
	y2099 := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct{ body, want string }{
		"lease": {`{"owner":{"host":"elsewhere","pid":7,"run_id":"theirs"},"token":"x","lease_ms":` + strconv.FormatInt(time.Until(y2099).Milliseconds(), 10) + `}`,
			"held by elsewhere pid 7 (run theirs) until 10:01:00 unless renewed (lease 1m0s); not trusted: its lease of "},
		"renewal": {`{"owner":{"host":"elsewhere","pid":7,"run_id":"theirs"},"token":"x","lease_ms":60000,"renewed_at":"2099-01-01T00:00:00Z"}`,
			"not trusted: its renewal is dated 2099-01-01T00:00:00Z, in the future"},
		"torn": {`{"owner":{"host":"elsewh`, "held by an unknown holder until 10:01:00 unless renewed (lease 1m0s); not trusted: it is not a runall claim"},
	} {
		t.Run(name, func(t *testing.T) {
			stores(t, func(t *testing.T, st func() claims.Store) {
				clk := &clock{now: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
				s, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml"},
					Owner: claims.Owner{Host: "here", PID: 2}, Lease: lease, Now: clk.Now})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st().Put(ctx, claims.ClaimDir+"t0.json", []byte(tc.body), s3sync.Condition{}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				h, err := s.Holder(ctx, "t0")
				if err != nil || !strings.Contains(h.String(), tc.want) || h.Mine {
					t.Errorf("holder: %v (mine %v, %v), want another's claim that says %q", h, h.Mine, err, tc.want)
				}
				if _, err := s.Claim(ctx, "t0"); !errors.Is(err, claims.ErrTaken) {
					t.Fatalf("claim within the sweep's lease: %v, want claims.ErrTaken", err)
				}
				clk.add(lease + time.Second)
				l, err := s.Claim(ctx, "t0")
				if err != nil {
					t.Fatalf("claim unchanged for the sweep's lease: %v, want it taken over", err)
				}
				if h, err := s.Holder(ctx, "t0"); err != nil || !h.Mine {
					t.Errorf("holder once taken over: %v (mine %v, %v), want this runall's own", h, h.Mine, err)
				}
				l.StopRenewing()
			})
		})
	}
}

// TestClaimsLeaseOutOfRange (issue 42, point 3): a lease_ms past what a duration holds is
// refused, or distrusted, with its value as written, not taken as the duration it overflows
// to: a sweep.json that records one is not runall's; a claim that names one is held for the
// sweep's lease, not for the millisecond it wrapped to; a runall asked for a lease over
// claims.MaxLease is refused, naming it.
func TestClaimsLeaseOutOfRange(t *testing.T) {
	const huge = "9223372036854775807"
	stores(t, func(t *testing.T, st func() claims.Store) {
		body := `{"hash":"h1","file":"tasks.yml","lease_ms":` + huge + `}`
		if _, err := st().Put(ctx, "sweep.json", []byte(body), s3sync.Condition{}); err != nil {
			t.Fatal(err)
		}
		_, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml"}, Lease: time.Minute})
		if !errors.Is(err, claims.ErrOtherSweep) || !strings.Contains(fmt.Sprint(err), "lease_ms "+huge+" is out of range") {
			t.Errorf("sweep.json with lease_ms %s: got %v, want it refused with its value", huge, err)
		}
	})
	stores(t, func(t *testing.T, st func() claims.Store) {
		clk := &clock{now: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
		s, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml"},
			Owner: claims.Owner{Host: "here", PID: 2}, Lease: time.Minute, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		claim := `{"owner":{"host":"elsewhere","pid":7,"run_id":"theirs"},"token":"x","lease_ms":` + huge + `}`
		if _, err := st().Put(ctx, claims.ClaimDir+"t0.json", []byte(claim), s3sync.Condition{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		h, err := s.Holder(ctx, "t0")
		if want := "its lease of " + huge + " ms is longer than the sweep's 1m0s"; err != nil || !strings.Contains(h.String(), want) {
			t.Errorf("holder: %v (%v), want it to say %q", h, err, want)
		}
		clk.add(time.Second)
		if _, err := s.Claim(ctx, "t0"); !errors.Is(err, claims.ErrTaken) {
			t.Errorf("claim a second into the sweep's lease: %v, want claims.ErrTaken (held for the sweep's lease)", err)
		}
	})
	_, err := claims.Open(ctx, claimstest.NewMem(), claims.Options{Identity: claims.Identity{Hash: "h1"}, Lease: 1000 * time.Hour})
	if err == nil || !strings.Contains(err.Error(), "a lease of 1000h0m0s is out of range") {
		t.Errorf("a lease of 1000h: %v, want it refused with its value", err)
	}
}
