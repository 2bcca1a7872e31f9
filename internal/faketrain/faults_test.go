package faketrain

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/runner/metric"
)

// TestCrashAtEveryAttempt: a run that crashes at step 3 prints a traceback, exits with an
// error after saving epoch 1, and a run resumed from that epoch crashes at step 3 again.
func TestCrashAtEveryAttempt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	var out, errs bytes.Buffer
	o := Options{LR: 0.01, Width: 64, Epochs: 3, Batches: 2, Checkpoint: dir, Stdout: &out, Stderr: &errs, Faults: Faults{CrashAt: 3}}
	for attempt := 1; attempt <= 2; attempt++ {
		errs.Reset()
		err := Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "step 3") {
			t.Fatalf("attempt %d: %v, want a crash at step 3", attempt, err)
		}
		if !strings.Contains(errs.String(), "Traceback (most recent call last)") || !strings.Contains(errs.String(), "RuntimeError: simulated crash at step 3") {
			t.Errorf("attempt %d: no traceback on stderr: %q", attempt, errs.String())
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ckptFile)); string(b) != "epoch 1\n" {
			t.Errorf("attempt %d: checkpoint %q, want epoch 1", attempt, b)
		}
		o.Resume = true
	}
}

// TestNaNFrom: from the epoch that reaches step 3 the losses print as nan, which runall's
// reader takes as steps with no value; the accuracies stay numbers.
func TestNaNFrom(t *testing.T) {
	var out bytes.Buffer
	o := Options{LR: 0.01, Width: 64, Epochs: 3, Batches: 2, Stdout: &out, Stderr: &bytes.Buffer{}, Faults: Faults{NaNFrom: 3}}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	s := new(metric.Set)
	nan := map[string][]int{}
	s.Observe(func(name string, v float64, step int) {
		if math.IsNaN(v) {
			nan[name] = append(nan[name], step)
		}
	})
	r := metric.NewReader(s, metric.Formats{})
	for line := range strings.Lines(out.String()) {
		r.Line(strings.TrimSuffix(line, "\n"))
	}
	for _, name := range []string{"loss", "val_loss"} {
		if got := nan[name]; len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Errorf("%s: nan at steps %v, want 2 and 3:\n%s", name, got, out.String())
		}
	}
	if _, series, _ := s.Result(); len(nan["val_accuracy"]) > 0 || len(series["val_accuracy"]) != 3 {
		t.Errorf("val_accuracy: nan at %v, want three numbers:\n%s", nan["val_accuracy"], out.String())
	}
}

// TestHangPrinting: a run that hangs after step 2 while printing makes no more progress (no
// epoch line) but prints its waiting lines, until it is stopped.
func TestHangPrinting(t *testing.T) {
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o := Options{LR: 0.01, Width: 64, Epochs: 2, Batches: 2, BatchTime: time.Millisecond, Stdout: out, Stderr: &lockedBuffer{},
		Faults: Faults{HangAfter: 2, HangPrint: true}}
	go func() { done <- Run(ctx, o) }()
	eventually.True(t, "waiting lines printed while hung", func() bool {
		return strings.Count(out.String(), "waiting for the data loader") >= 3
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("hung run ended with %v, want context.Canceled", err)
	}
	if strings.Contains(out.String(), "loss:") {
		t.Errorf("a run hung at step 2 of epoch 1 ended an epoch:\n%s", out.String())
	}
}

// TestHangSilent: a silent hang prints nothing and returns only when stopped; a step other
// than the fault's does not hang.
func TestHangSilent(t *testing.T) {
	var out bytes.Buffer
	f := Faults{HangAfter: 2}
	if err := f.hang(context.Background(), 1, time.Millisecond, &out); err != nil {
		t.Errorf("step 1 of a hang after 2: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.hang(ctx, 2, time.Millisecond, &out); !errors.Is(err, context.Canceled) || out.Len() > 0 {
		t.Errorf("hung at step 2: %v, printed %q; want context.Canceled and nothing", err, out.String())
	}
}

// TestSlowFromAndValidate: batches from SlowFrom take SlowBy times as long; bad faults are refused.
func TestSlowFromAndValidate(t *testing.T) {
	f := Faults{SlowFrom: 5, SlowBy: 3}
	if got := f.batchTime(4, time.Second); got != time.Second {
		t.Errorf("step 4: %v, want 1s", got)
	}
	if got := f.batchTime(5, time.Second); got != 3*time.Second {
		t.Errorf("step 5: %v, want 3s", got)
	}
	for _, bad := range []Faults{{CrashAt: -1}, {HangPrint: true}, {SlowFrom: 2, SlowBy: 0.5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// lockedBuffer is a buffer written by Run's goroutine and read by the test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
