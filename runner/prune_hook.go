package runner

import (
	"context"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prune"
)

// newPruner is the run's early stopping (early-stop:), a consumer of its events that stops
// losing trials through the run's Stopper; nil when no block sets it. With claims, each
// block's rung values live under the sweep's prefix, so that every runall's decisions use
// every runall's trials.
func (r *runDriver) newPruner() *prune.Pruner {
	o := prune.Options{Store: r.rungStore, Record: r.life.ledger.forecast}
	if r.pause != nil && !r.opts.claiming() && !r.opts.Shard.Active() {
		// Freeze-thaw counts the trials that wait to start: under claims or a shard, others
		// run elsewhere and would look as if they waited for ever.
		o.Pauser = r.pause
	}
	p := prune.New(r.plan, o)
	if p != nil {
		p.UseStopper(r.launch.procs.Running)
		r.life.settle = append(r.life.settle, p.Settle)
	}
	return p
}

// rungStore is where a block's rule keeps what it compares (asha's rung values, median's
// running averages, forecast's values at max and median forecasts): in memory, or under the claims prefix when the run shares its trials.
// The pruner is made with the stream, before runAll joins the sweep, but asks for a
// block's store only when the block's first value arrives: from a trial, which runs only
// after the sweep was joined (or the run skipped every task), so r.claims is set by then.
func (r *runDriver) rungStore(block *plan.Task, say func(string)) (earlystop.Store, error) {
	if r.claims == nil {
		return nil, nil
	}
	newStore := claims.NewRungs
	switch block.EarlyStop.Method {
	case earlystop.Median:
		newStore = claims.NewRunningAverages
	case earlystop.Forecast:
		newStore = claims.NewForecasts
	}
	st, err := newStore(context.Background(), r.claims.Store(), block.Key)
	if err != nil {
		return nil, err
	}
	st.OnUnread(say)
	return st, nil
}
