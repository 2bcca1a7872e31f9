package gpusim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Train is the compute of a training loop that a simulated process runs once its memory has
// reached its peak: Steps steps of StepTime each when it is alone on its GPUs, of which the
// share Busy is the GPU computing. Beside other processes its steps stretch as compute.go's
// model says.
type Train struct {
	Steps    int
	StepTime time.Duration
	Busy     float64 // the share of a step the GPU computes, in (0, 1]
	SM       float64 // the share of the SMs its kernels fill while they run, in (0, 1]; 0: all
}

// Validate says what is wrong with t, if anything.
func (t Train) Validate() error {
	switch {
	case t.Steps < 0:
		return errors.New("the number of training steps cannot be negative")
	case t.Steps == 0:
		return nil
	case t.StepTime <= 0:
		return errors.New("training steps need a step time of more than 0")
	case !(t.Busy > 0 && t.Busy <= 1):
		return fmt.Errorf("busy share %v: want a share of the step from 0 (excluded) to 1, such as 0.3", t.Busy)
	case !(t.SM >= 0 && t.SM <= 1):
		return fmt.Errorf("SM share %v: want a share of the SMs from 0 (excluded) to 1, such as 0.5", t.SM)
	}
	return nil
}

// The pace of a step is read afresh from the shared state at least every tick (a quarter of
// a step, at least minTick), so that a process that joins or leaves its GPUs changes the pace
// of the step under way: often enough to follow, rarely enough that 24 processes reading
// the state cost little.
const minTick = 50 * time.Millisecond

// train runs t's steps, telling the other processes on its devices what it computes while
// it runs them, and printing its progress to w as tqdm does.
func (c *claim) train(ctx context.Context, t Train, w io.Writer) error {
	if err := c.compute(Load{Busy: t.Busy, SM: t.SM}); err != nil {
		return err
	}
	bar := NewProgress(w, t.Steps, time.Now)
	tick := max(t.StepTime/4, minTick)
	for n := 1; n <= t.Steps; n++ {
		for left := 1.0; left > 1e-9; {
			s, err := c.stretch()
			if err != nil {
				return err
			}
			full := float64(t.StepTime) * s // this step's length at the current pace
			start := time.Now()
			if err := sleepCtx(ctx, min(time.Duration(left*full), tick)); err != nil {
				return err
			}
			left -= float64(time.Since(start)) / full
		}
		bar.Update(n)
	}
	bar.Close()
	return c.compute(Load{}) // it holds its memory from here on, computing nothing
}

// stretch is how many times longer a step takes now than alone: the most of any of its
// devices, as a process spread over several waits for the slowest.
func (c *claim) stretch() (float64, error) {
	s := 1.0
	err := c.st.locked(func() error {
		for _, d := range c.devs {
			loads, err := c.st.loads(d)
			if err != nil {
				return err
			}
			s = max(s, Stretch(loads, c.st.devs[d].MPS))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("fake-alloc: %w", err)
	}
	return s, nil
}

// loads lists what the live claims on device i compute now. Hold the lock.
func (s *state) loads(i int) ([]Load, error) {
	cs, err := s.claims(i)
	if err != nil {
		return nil, err
	}
	var out []Load
	for _, c := range cs {
		if !c.lingering && c.load.Busy > 0 {
			out = append(out, c.load)
		}
	}
	return out, nil
}
