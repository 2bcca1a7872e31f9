package k8spod

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// sink records what it is sent, and refuses or fails when told.
type sink struct {
	sent []Progress
	err  error
}

func (s *sink) Send(_ context.Context, p Progress) error {
	if s.err != nil {
		return s.err
	}
	s.sent = append(s.sent, p)
	return nil
}

// TestPublish: unchanged figures are sent once; the last figures are sent as ctx ends; a
// refusal ends the publishing, said once.
func TestPublish(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantSent  int
		wantSaid  int
		wantFinal bool
	}{
		{"sent", nil, 2, 0, true},
		{"refused", fmt.Errorf("%w: 403", ErrForbidden), 0, 1, false},
		{"failing", errors.New("connection refused"), 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{err: tc.err}
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			progress := func(context.Context) Progress {
				n++
				if n >= 2 { // the end: asked for once ctx is done
					return Progress{Done: 3}
				}
				return Progress{Waiting: 3}
			}
			var said []string
			cancel() // the first send, then the final one at once
			Publish(ctx, s, "test", time.Hour, progress, func(l string) { said = append(said, l) })
			if len(s.sent) != tc.wantSent || len(said) != tc.wantSaid {
				t.Errorf("sent %v, said %q; want %d sent, %d said", s.sent, said, tc.wantSent, tc.wantSaid)
			}
			if tc.wantFinal && s.sent[len(s.sent)-1].Done != 3 {
				t.Errorf("the last figures sent are %v, want the final ones", s.sent[len(s.sent)-1])
			}
		})
	}
}

func TestAnnotations(t *testing.T) {
	a := Progress{Done: 2, Running: 1, Waiting: 3, Best: "trial 4", Metric: "loss", Value: "0.1", ETA: 90 * time.Second}.Annotations()
	want := map[string]string{KeyDone: "2", KeyRunning: "1", KeyWaiting: "3", KeyBest: "trial 4 loss=0.1", KeyETA: "1m30s"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("%s = %q, want %q", k, a[k], v)
		}
	}
}
