package runner

import (
	"context"
	"time"
)

// stopping is what a signal does to the run's network waits. The first signal cancels the
// downloads (a run that is stopping has no use for its inputs, and a large dataset must not
// hold SIGTERM for minutes); the final uploads still run, for the grace period at most, and
// a second signal ends them at once.
type stopping struct {
	downloads context.Context // cancelled by the first signal
	first     context.CancelFunc
	final     context.Context // cancelled by the second
	second    context.CancelFunc
}

func newStopping() *stopping {
	s := &stopping{}
	s.downloads, s.first = context.WithCancel(context.Background())
	s.final, s.second = context.WithCancel(context.Background())
	return s
}

// download is ctx, also cancelled by the first signal.
func (s *stopping) download(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.downloads, cancel)
	return ctx, func() { stop(); cancel() }
}

// finalUpload is the context of what runs after the tasks (uploads, the results' upload):
// cancelled by a second signal, and after a signal bounded by grace.
func (s *stopping) finalUpload(interrupted bool, grace time.Duration) (context.Context, context.CancelFunc) {
	if interrupted {
		return context.WithTimeout(s.final, grace)
	}
	return context.WithCancel(s.final)
}
