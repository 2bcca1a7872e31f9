package claimsource

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// nopRun is a Run that tells nothing and is never stopped, a Masker that masks nothing,
// and the trials' keys (their names) and learned needs (none).
type nopRun struct{}

func (nopRun) Say(string)                        {}
func (nopRun) Emit(event.Event)                  {}
func (nopRun) Skip(*plan.Task, string)           {}
func (nopRun) SkipAll([]*plan.Task, string)      {}
func (nopRun) Halted() bool                      { return false }
func (nopRun) StoppedBy() syscall.Signal         { return 0 }
func (nopRun) GivesBack() string                 { return "" }
func (nopRun) Results(*plan.Task) []results.Task { return nil }
func (nopRun) Learned() map[string]uint64        { return nil }
func (nopRun) All(any)                           {}
func (nopRun) key(t *plan.Task) string           { return t.Name }

// TestFiguresReuseListing: the sweep's figures count from the queue as the Source last
// listed it, and list it again only when that listing is older than asked (the Pod's
// annotations every 15 s add no listing while the Source lists every poll).
func TestFiguresReuseListing(t *testing.T) {
	ctx := context.Background()
	block := &plan.Task{Name: "sweep"}
	for _, n := range []string{"t0", "t1", "t2"} {
		block.Parallel = append(block.Parallel, &plan.Task{Name: n, Cmd: "true"})
	}
	p := &plan.Plan{File: "tasks.yml", Tasks: []*plan.Task{block}}
	var run nopRun
	c, complete, err := Open(ctx, claimstest.NewMem(), "mem://sweep/", Options{Run: run, Plan: p, RunID: "r",
		Key: run.key, Learned: run.Learned, Mask: run, Running: executor.NewRunning(time.Second)})
	if err != nil || complete {
		t.Fatalf("Open: %v, complete %v", err, complete)
	}
	if _, err := c.leases.hold(ctx, block.Parallel[0], c.keys[block.Parallel[0]]); err != nil {
		t.Fatal(err)
	}
	defer c.ReleaseAll()
	lists := func() int64 { return c.sweep.Requests().List }
	if _, err := c.refresh(ctx); err != nil { // as the Source's Next does
		t.Fatal(err)
	}
	before := lists()
	f := c.Figures(ctx, time.Hour)
	if got := lists() - before; got != 0 {
		t.Errorf("figures over a fresh listing made %d LIST requests, want none", got)
	}
	if f.Done != 0 || f.Running != 1 || f.Waiting != 2 {
		t.Errorf("figures %+v, want 0 done, 1 running (held here), 2 waiting", f)
	}
	before = lists()
	c.Figures(ctx, 0)
	if got := lists() - before; got == 0 {
		t.Errorf("figures over a listing older than asked listed nothing")
	}
}
