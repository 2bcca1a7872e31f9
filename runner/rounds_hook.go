package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/rounds"
)

// newRounds is the run's early stopping by the rules that pause trials at their checkpoints
// (sha, hyperband, pbt): a consumer of its events that pauses, resumes and ends trials
// through the run's pauser; nil when no block sets one. With claims, each block's board
// lives under the sweep's prefix and is read every second, so that every runall decides
// with every runall's trials. The launcher runs a pbt trial as the consumer says.
func (r *runDriver) newRounds() *rounds.Rounds {
	if r.pause == nil {
		return nil // no trial has a checkpoint: check refuses a rule that pauses
	}
	poll := time.Duration(0)
	if r.opts.claiming() {
		poll = time.Second
	}
	rr, err := rounds.New(r.plan, rounds.Options{Pauser: roundsPauser{r}, Board: r.board, Poll: poll, Key: trialKey})
	if err != nil {
		r.life.say("early-stop: " + err.Error() + ": no trial is paused")
		return nil
	}
	if rr != nil {
		r.launch.scripts.variant = rr.Variant
	}
	return rr
}

// board is where a block's rounds are kept: in memory, or under the claims prefix when
// the run shares its trials.
func (r *runDriver) board(block *plan.Task) (rounds.Board, error) {
	if r.claims == nil {
		return nil, nil
	}
	return claims.NewBoard(r.claims.sweep.Store(), block.Key)
}

// roundsPauser is the run's pauser as the rules that pause ask it, with pbt's copy of one
// trial's checkpoint to another.
type roundsPauser struct{ r *runDriver }

func (p roundsPauser) PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool {
	return p.r.pause.PauseAt(t, n, reason, otherwise)
}

func (p roundsPauser) Resume(t *plan.Task, _ int) bool { return p.r.pause.Resume(t) }

func (p roundsPauser) End(t *plan.Task, _ int, status results.Status, reason string) bool {
	return p.r.pause.End(t, status, reason)
}

// Copy makes from's kept checkpoint t's, at a pbt round: t then resumes from it.
func (p roundsPauser) Copy(ctx context.Context, from, t *plan.Task, n int) error {
	st, err := p.r.launch.ckpts.store(ctx, t, p.r.launch.base)
	if err != nil {
		return err
	}
	writer := fmt.Sprintf("%s-pbt%d", plan.Slug(p.r.opts.RunID), n)
	_, err = checkpoint.Copy(ctx, st, trialKey(from), trialKey(t), writer, os.TempDir())
	return err
}

// resultLineage is a lineage as the results keep it.
func resultLineage(ls []rounds.Exploit) []results.Exploit {
	if ls == nil {
		return nil
	}
	out := make([]results.Exploit, 0, len(ls))
	for _, e := range ls {
		params := map[string]string{}
		for _, p := range e.Params {
			params[p.Name] = p.Value
		}
		out = append(out, results.Exploit{Step: e.Step, From: e.From, Value: e.Value, Params: params})
	}
	return out
}
