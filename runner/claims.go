package runner

import (
	"context"
	"fmt"
	"syscall"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// openClaims joins the sweep the run takes its trials from (claimsource.Open): the queue
// under opts.Prefix (--claims), through opts.Store when given, else through the run's S3
// client (conn). It reports whether every trial was already done.
func openClaims(ctx context.Context, opts ClaimsOptions, conn *s3Conn, o claimsource.Options) (*claimsource.Claimer, bool, error) {
	store := opts.Store
	if store == nil {
		client, err := conn.get(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("claims: %w", err)
		}
		if store, err = claims.NewS3(client, opts.Prefix); err != nil {
			return nil, false, err
		}
	}
	o.Lease = opts.Lease
	return claimsource.Open(ctx, store, opts.Prefix, o)
}

// claimsRun is the run as a claims sweep sees it (claimsource.Run): its lifecycle, and each
// command's log as the results name it.
type claimsRun struct {
	life    *lifecycle
	logPath func(*plan.Task) string
}

func (c claimsRun) Say(line string)                        { c.life.say(line) }
func (c claimsRun) Emit(ev event.Event)                    { c.life.emit(ev) }
func (c claimsRun) Skip(t *plan.Task, why string)          { c.life.skip(t, why) }
func (c claimsRun) SkipAll(tasks []*plan.Task, why string) { c.life.skipAll(tasks, why) }
func (c claimsRun) Halted() bool                           { return c.life.halted() }
func (c claimsRun) StoppedBy() syscall.Signal              { return c.life.stoppedBy() }

// Results is what the ledger holds of trial's commands, each log named as results() names it.
func (c claimsRun) Results(trial *plan.Task) []results.Task {
	var ts []results.Task
	for _, cmd := range trialCommands(trial) {
		res := c.life.ledger.result(cmd)
		res.LogFile = c.logPath(cmd)
		ts = append(ts, res)
	}
	return ts
}
