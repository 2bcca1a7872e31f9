package executor

import (
	"context"
	"testing"

	"github.com/runall/runall/runner/proc"
)

// TestFreeAttemptsSpendNoRetry: a failed attempt that Free says spends no retry (a hung
// one, resumed) runs again though retries: 0; the first one that is not free ends it.
func TestFreeAttemptsSpendNoRetry(t *testing.T) {
	var got told
	hooks := got.hooks(true)
	hooks.Free = func(n int) bool { return n <= 2 }
	res := Run(context.Background(), command("exit 3", 0), NewHandle(proc.NewTable()), hooks)
	if res.Attempts != 3 || len(got.ended) != 3 || !got.ended[0] || !got.ended[1] || got.ended[2] {
		t.Errorf("%d attempts, ends %v; want 3: two free ones retried, the third not", res.Attempts, got.ended)
	}
}

// TestHangEndsTheAttemptAlone: Hang ends the running attempt but asks no stop, so that
// the command may run again; TakeHung tells it once, for that attempt only.
func TestHangEndsTheAttemptAlone(t *testing.T) {
	h := NewHandle(proc.NewTable())
	h.Hang(Hung{Attempt: 1, Reason: "hung: test"}, 0)
	if h.Stopped() != nil || h.TakeHung(2) != nil {
		t.Fatal("a hang asked a stop, or was told of another attempt")
	}
	if hu := h.TakeHung(1); hu == nil || hu.Reason != "hung: test" || h.TakeHung(1) != nil {
		t.Errorf("TakeHung(1) = %v, then again not nil", hu)
	}
}
