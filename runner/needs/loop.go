// What both admitters measure by: the sampling loop and the signal that room may have
// opened, written once.

package needs

import (
	"context"
	"time"
)

// Loop is a sampling loop: it calls its tick every period from Start until Stop.
type Loop struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended
}

// Start calls tick every period, on a goroutine of its own, until ctx ends or Stop.
func (l *Loop) Start(ctx context.Context, every time.Duration, tick func()) {
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				tick()
			}
		}
	}()
}

// Stop ends the loop, if one runs, and waits for it.
func (l *Loop) Stop() {
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
}

// Changed tells the trials that wait for room that what admission sees may have changed
// (a measurement, a release). Its owner's lock guards it.
type Changed struct {
	ch chan struct{}
}

// Chan is the channel the next Wake closes.
func (c *Changed) Chan() <-chan struct{} {
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// Wake wakes whoever waits on Chan.
func (c *Changed) Wake() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}
