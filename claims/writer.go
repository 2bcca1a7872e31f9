package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/runall/runall/s3sync"
)

// writer is a Sweep's writes: each carries a token that tells this process's writes from
// others', so that a write an SDK retried after a lost response is known as its own.
type writer struct {
	store *counted
	opts  *Options
	nonce string // this process's, in every token

	mu  sync.Mutex
	seq int
}

// token is a new write's: unique to this process and this write.
func (w *writer) token() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	return fmt.Sprintf("%s-%d", w.nonce, w.seq)
}

// claimBody is a claim written now with token, under this runall's lease.
func (w *writer) claimBody(token string) []byte {
	now := w.opts.Now().UTC()
	b, _ := json.Marshal(claimBody{Owner: w.opts.Owner, Token: token,
		LeaseMS: w.opts.Lease.Milliseconds(), RenewedAt: now, ExpiresAt: now.Add(w.opts.Lease)})
	return b
}

// put writes under cond; a write that lost its condition because an earlier try of the same
// write (retried by the SDK after a lost response) won is a success.
func (w *writer) put(ctx context.Context, key string, body []byte, cond s3sync.Condition, token string) (string, error) {
	etag, _, _, err := w.putOrRead(ctx, key, body, cond, token)
	return etag, err
}

// putOrRead is put that, when the write lost to another's, also returns the object it read
// to tell (nil when it could not be read), which saves a claimant a second request.
func (w *writer) putOrRead(ctx context.Context, key string, body []byte, cond s3sync.Condition, token string) (etag string, cur []byte, curETag string, err error) {
	etag, err = w.store.Put(ctx, key, body, cond)
	if !errors.Is(err, s3sync.ErrPrecondition) {
		return etag, nil, "", err
	}
	got, gotETag, gerr := w.store.Get(ctx, key)
	if gerr != nil {
		return "", nil, "", err
	}
	var t struct{ Token string }
	if json.Unmarshal(got, &t) == nil && t.Token == token {
		return gotETag, nil, "", nil
	}
	return "", got, gotETag, err
}
