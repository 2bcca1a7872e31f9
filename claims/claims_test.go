package claims_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/internal/eventually"

	"github.com/runall/runall/internal/miniotest"
	"github.com/runall/runall/s3sync"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

var ctx = context.Background()

// stores runs a test against the in-memory store and against a real MinIO.
func stores(t *testing.T, test func(t *testing.T, newStore func() claims.Store)) {
	t.Run("mem", func(t *testing.T) {
		m := claimstest.NewMem()
		test(t, func() claims.Store { return m })
	})
	t.Run("minio", func(t *testing.T) {
		srv := miniotest.Shared(t)
		bucket := srv.NewBucket(t)
		env := map[string]string{}
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		c, err := s3sync.NewClient(ctx, s3sync.ClientOptions{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		test(t, func() claims.Store {
			s, err := claims.NewS3(c, "s3://"+bucket+"/sweep/")
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

func open(t *testing.T, st claims.Store, pid int, lease time.Duration) *claims.Sweep {
	t.Helper()
	s, err := claims.Open(ctx, st, claims.Options{Identity: claims.Identity{Hash: "h1", File: "tasks.yml", Trials: 3},
		Owner: claims.Owner{Host: "test", PID: pid, RunID: "r"}, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestClaimOnce(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		a, b := open(t, st(), 1, time.Minute), open(t, st(), 2, time.Minute)
		l, err := a.Claim(ctx, "t0")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Claim(ctx, "t0"); !errors.Is(err, claims.ErrTaken) {
			t.Fatalf("second claim: %v, want claims.ErrTaken", err)
		}
		if err := l.Finish(ctx, claims.Record{Failed: true}); err != nil {
			t.Fatal(err)
		}
		v, err := b.Refresh(ctx)
		if err != nil || !v.Done["t0"] {
			t.Fatalf("refresh: %v %v, want t0 done", v, err)
		}
		if _, err := b.Claim(ctx, "t0"); !errors.Is(err, claims.ErrDone) {
			t.Fatalf("claim after done: %v, want claims.ErrDone", err)
		}
		recs, err := b.Records(ctx, []string{"t0", "t1"})
		if err != nil || len(recs) != 1 || !recs[0].Failed || recs[0].Owner.PID != 1 {
			t.Fatalf("records: %+v %v", recs, err)
		}
	})
}

func TestOtherSweepRefused(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		open(t, st(), 1, time.Minute)
		_, err := claims.Open(ctx, st(), claims.Options{Identity: claims.Identity{Hash: "h2", File: "other.yml"}, Lease: time.Minute})
		if !errors.Is(err, claims.ErrOtherSweep) || !strings.Contains(err.Error(), "tasks.yml") {
			t.Fatalf("got %v, want claims.ErrOtherSweep naming tasks.yml", err)
		}
	})
}

func TestRenewedClaimHolds(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		// Renewals come every third of the lease: a lease of 1.5 s leaves a renewal a second
		// of slack, which a loaded machine running -race needs (400 ms failed there now and then).
		const lease = 1500 * time.Millisecond
		a, b := open(t, st(), 1, lease), open(t, st(), 2, lease)
		l, err := a.Claim(ctx, "t0")
		if err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(2 * lease); time.Now().Before(end); time.Sleep(lease / 8) {
			if _, err := b.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Claim(ctx, "t0"); !errors.Is(err, claims.ErrTaken) {
				t.Fatalf("claim of a renewed lease: %v, want claims.ErrTaken", err)
			}
		}
		if err := l.Finish(ctx, claims.Record{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestExpiredClaimTakenOver(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		const lease = 300 * time.Millisecond
		a, b := open(t, st(), 1, lease), open(t, st(), 2, lease)
		la, err := a.Claim(ctx, "t0")
		if err != nil {
			t.Fatal(err)
		}
		la.StopRenewing() // its runall dies: no more renewals
		var lb *claims.Lease
		eventually.Within(t, 20*time.Second, "takeover", func() bool {
			lb, err = b.Claim(ctx, "t0")
			return err == nil
		})
		if err := la.Finish(ctx, claims.Record{}); !errors.Is(err, claims.ErrLost) {
			t.Fatalf("finish by the old holder: %v, want claims.ErrLost", err)
		}
		if err := lb.Finish(ctx, claims.Record{}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReleasedClaimTakenAtOnce(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		a, b := open(t, st(), 1, time.Hour), open(t, st(), 2, time.Hour)
		la, err := a.Claim(ctx, "t0")
		if err != nil {
			t.Fatal(err)
		}
		la.Release(ctx)
		lb, err := b.Claim(ctx, "t0")
		if err != nil {
			t.Fatalf("claim of a released trial: %v", err)
		}
		lb.Release(ctx)
	})
}

func TestLostLeaseNoticed(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		const lease = 300 * time.Millisecond
		a, b := open(t, st(), 1, lease), open(t, st(), 2, lease)
		la, err := a.Claim(ctx, "t0")
		if err != nil {
			t.Fatal(err)
		}
		// Someone overwrites the claim (a takeover the holder has not seen yet).
		_, etag := readClaim(t, st(), "t0")
		if _, err := st().Put(ctx, claims.ClaimDir+"t0.json", b.ClaimBody("x"), s3sync.Condition{IfMatch: etag}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-la.Lost():
		case <-time.After(20 * time.Second):
			t.Fatal("the lease was not noticed lost")
		}
		if !errors.Is(la.Err(), claims.ErrLost) {
			t.Fatalf("Err: %v", la.Err())
		}
	})
}

func readClaim(t *testing.T, st claims.Store, key string) ([]byte, string) {
	b, etag, err := st.Get(ctx, claims.ClaimDir+key+".json")
	if err != nil {
		t.Fatal(err)
	}
	return b, etag
}

func TestUnreachableStoreLosesLease(t *testing.T) {
	m := claimstest.NewMem()
	const lease = 300 * time.Millisecond
	a := open(t, m, 1, lease)
	l, err := a.Claim(ctx, "t0")
	if err != nil {
		t.Fatal(err)
	}
	m.Fail(true)
	start := time.Now()
	<-l.Lost()
	if time.Since(start) > 10*lease {
		t.Fatalf("lost after %v", time.Since(start))
	}
	if err := l.Finish(ctx, claims.Record{}); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("finish: %v", err)
	}
}

// replayStore makes the first Put of a key succeed but answer as if it had lost: what the
// SDK's retry of a write whose response was lost sees.
type replayStore struct {
	claims.Store
	mu   sync.Mutex
	seen map[string]bool
}

func (r *replayStore) Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (string, error) {
	etag, err := r.Store.Put(ctx, key, body, cond)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && !r.seen[key] {
		r.seen[key] = true
		_, err = r.Store.Put(ctx, key, body, cond) // the retry
		return "", err
	}
	return etag, err
}

func TestRetriedWriteIsOurs(t *testing.T) {
	st := &replayStore{Store: claimstest.NewMem(), seen: map[string]bool{}}
	a := open(t, st, 1, time.Minute)
	l, err := a.Claim(ctx, "t0")
	if err != nil {
		t.Fatalf("claim whose response was lost: %v", err)
	}
	if err := l.Finish(ctx, claims.Record{}); err != nil {
		t.Fatalf("finish whose response was lost: %v", err)
	}
}

// TestRace has many runalls race for many trials: each trial is recorded exactly once.
func TestRace(t *testing.T) {
	stores(t, func(t *testing.T, st func() claims.Store) {
		const procs, trials = 10, 40
		var mu sync.Mutex
		finished := map[string]int{}
		var wg sync.WaitGroup
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := open(t, st(), p, time.Minute)
				for i := range trials {
					key := fmt.Sprintf("t%02d", i)
					l, err := s.Claim(ctx, key)
					if err != nil {
						continue
					}
					if err := l.Finish(ctx, claims.Record{}); err != nil {
						t.Errorf("finish %s: %v", key, err)
						continue
					}
					mu.Lock()
					finished[key]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for i := range trials {
			if n := finished[fmt.Sprintf("t%02d", i)]; n != 1 {
				t.Errorf("t%02d finished %d times", i, n)
			}
		}
	})
}

// flakyDone fails the first write of each done record, as a store that restarts between the
// last renewal and the record would.
type flakyDone struct {
	claims.Store
	mu     sync.Mutex
	failed map[string]bool
}

func (f *flakyDone) Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (string, error) {
	f.mu.Lock()
	first := strings.HasPrefix(key, claims.DoneDir) && !f.failed[key]
	f.failed[key] = f.failed[key] || first
	f.mu.Unlock()
	if first {
		return "", errors.New("connection refused")
	}
	return f.Store.Put(ctx, key, body, cond)
}

// TestFinishRetriesRecord: a trial that ran is recorded once the store answers again,
// rather than left for another runall to run a second time.
func TestFinishRetriesRecord(t *testing.T) {
	st := &flakyDone{Store: claimstest.NewMem(), failed: map[string]bool{}}
	a := open(t, st, 1, 3*time.Second)
	l, err := a.Claim(ctx, "t0")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, claims.Record{}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	if _, _, err := st.Get(ctx, claims.DoneDir+"t0.json"); err != nil {
		t.Fatalf("no done record: %v", err)
	}
}
