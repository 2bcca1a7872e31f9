package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
)

// figuresWatcher keeps the View a run hands its watchers, and the sweep's figures as the run
// ends (read as the Pod's last annotations are).
type figuresWatcher struct {
	mu    sync.Mutex
	view  *View
	final claimsource.Figures
	ok    bool
}

func (w *figuresWatcher) Event(event.Event, func(event.Event)) {}

func (w *figuresWatcher) WatchRun(v View) func() {
	w.mu.Lock()
	w.view = &v
	w.mu.Unlock()
	return func() {
		f, ok := v.Sweep(context.Background(), 0)
		w.mu.Lock()
		w.final, w.ok = f, ok
		w.mu.Unlock()
	}
}

// figures are the sweep's figures now; false before the run joined the sweep.
func (w *figuresWatcher) figures() (claimsource.Figures, bool) {
	w.mu.Lock()
	v := w.view
	w.mu.Unlock()
	if v == nil {
		return claimsource.Figures{}, false
	}
	return v.Sweep(context.Background(), 0)
}

// TestClaimsSweepFigures (issue 46, point 5): a runall of a claims sweep sees the sweep's
// figures, not its own: while b holds t0, a, which ran t1 and t2, counts them done, t0
// running and nothing waiting, with t1 the best; at the end both count every trial done, and
// b, which never ran t1, names it the best from a's record.
func TestClaimsSweepFigures(t *testing.T) {
	store := claimstest.NewMem()
	release := filepath.Join(t.TempDir(), "release")
	file := fmt.Sprintf(`config:
  max-parallel-commands: 1
  objective: {metric: loss, mode: min}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t0
        cmd: while [ ! -e %q ]; do sleep 0.05; done; echo "runall-metric loss=3"
      - name: t1
        cmd: echo "runall-metric loss=1"
      - name: t2
        cmd: echo "runall-metric loss=2"
`, release)
	run := func(w *figuresWatcher, done chan<- error) {
		_, _, err := runFile(t, file, Options{Claims: ClaimsOptions{Store: store, Lease: 2 * time.Second}, Consumers: []event.Consumer{w}})
		done <- err
	}
	a, b := &figuresWatcher{}, &figuresWatcher{}
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go run(b, doneB)
	eventually.Within(t, 10*time.Second, "b claims t0", func() bool {
		return slices.ContainsFunc(store.Keys(), func(k string) bool { return strings.HasPrefix(k, "claims/") })
	})
	go run(a, doneA)
	var mid claimsource.Figures
	eventually.Within(t, 20*time.Second, "a sees t1 and t2 done, t0 running", func() bool {
		f, ok := a.figures()
		mid = f
		return ok && f.Done == 2
	})
	if mid.Running != 1 || mid.Waiting != 0 || !mid.HasBest || mid.Best.Name != "t1" || mid.Since.IsZero() {
		t.Errorf("a's figures while b runs t0: %+v; want 2 done, 1 running, 0 waiting, best t1, a start", mid)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, done := range map[string]chan error{"a": doneA, "b": doneB} {
		if err := <-done; err != nil {
			t.Errorf("run %s: %v", name, err)
		}
	}
	for name, w := range map[string]*figuresWatcher{"a": a, "b": b} {
		f := w.final
		if !w.ok || f.Done != 3 || f.Running != 0 || f.Waiting != 0 || !f.HasBest || f.Best.Name != "t1" || f.Best.Metrics["loss"] != 1 {
			t.Errorf("%s's last figures: %+v (joined %v); want 3 done, best t1 (loss 1)", name, f, w.ok)
		}
	}
}
