package runner

import (
	"context"
	"time"
)

// stopping is what a signal does to what the run waits on besides its tasks. The first signal
// cancels every wait of the run itself (downloads, a sampler's asks, the claims store: a
// run that is stopping has no use for them, and none may hold SIGTERM for minutes); what
// records the run (the final uploads, a sampler's tells) still runs, for the grace period
// at most, and a second signal ends it at once.
type stopping struct {
	grace     time.Duration
	downloads context.Context // cancelled by the first signal
	first     context.CancelFunc
	final     context.Context // cancelled by the second
	second    context.CancelFunc
	// checkpointFirst: on the first signal, a trial with checkpoint: keeps its next copy
	// before it is stopped (Options.Stop.CheckpointFirst, --grace-checkpoint: signals.go).
	checkpointFirst bool
}

func newStopping(grace time.Duration) *stopping {
	s := &stopping{grace: grace}
	s.downloads, s.first = context.WithCancel(context.Background())
	s.final, s.second = context.WithCancel(context.Background())
	return s
}

// untilStop is ctx, also cancelled by the first signal: for a wait the run has no use for
// once it is stopping.
func (s *stopping) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.downloads, cancel)
	return ctx, func() { stop(); cancel() }
}

// recording is ctx for what records the run as it ends (a sampler's tell): cancelled by the
// second signal, or the grace period after the first, whenever ctx was made.
func (s *stopping) recording(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stopFirst := context.AfterFunc(s.downloads, func() {
		t := time.AfterFunc(s.grace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	stopSecond := context.AfterFunc(s.final, cancel)
	return ctx, func() {
		stopFirst()
		stopSecond()
		cancel()
	}
}

// finalUpload is the context of what runs after the tasks (uploads, the results' upload):
// cancelled by a second signal, and after a signal bounded by grace.
func (s *stopping) finalUpload(interrupted bool, grace time.Duration) (context.Context, context.CancelFunc) {
	if interrupted {
		return context.WithTimeout(s.final, grace)
	}
	return context.WithCancel(s.final)
}
