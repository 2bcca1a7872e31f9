package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/rounds"
)

// roundsHook is what the rules that pause trials at their checkpoints (sha, hyperband, pbt)
// need of the run: its pauser, its checkpoints (pbt's copies), the claims their boards live
// under, and the launcher, which is given pbt's variant to run a trial as the rules say.
type roundsHook struct {
	pause  *pauser
	ckpts  *checkpoints
	base   []string // the run's environment: where a checkpoint store's credentials are
	runID  string
	claims func() *claimsource.Claimer // set once the sweep is joined; nil without --claims
	poll   time.Duration               // how often a shared board is read; 0: none is
	say    func(string)
	launch *launcher
}

// newRoundsHook is the run's part for the rules that pause.
func newRoundsHook(r *runDriver) *roundsHook {
	h := &roundsHook{pause: r.pause, ckpts: r.launch.ckpts, base: r.env.base, runID: r.opts.Record.RunID,
		claims: func() *claimsource.Claimer { return r.claims }, say: r.life.say, launch: r.launch}
	if r.opts.claiming() {
		h.poll = time.Second
	}
	return h
}

// rounds is the run's early stopping by the rules that pause trials: a consumer of its
// events that pauses, resumes and ends trials through the run's pauser; nil when no block
// sets one. With claims, each block's board lives under the sweep's prefix and is read every
// second, so that every runall decides with every runall's trials. The launcher runs a pbt
// trial as the consumer says.
func (h *roundsHook) rounds(p *plan.Plan) *rounds.Rounds {
	if h.pause == nil {
		return nil // no trial has a checkpoint: check refuses a rule that pauses
	}
	rr, err := rounds.New(p, rounds.Options{Pauser: h, Board: h.board, Poll: h.poll, Key: plan.Key})
	if err != nil {
		h.say("early-stop: " + err.Error() + ": no trial is paused")
		return nil
	}
	if rr != nil {
		h.launch.variant = func(t *plan.Task) (*plan.Task, []results.Exploit) {
			v, lineage := rr.Variant(t)
			return v, resultLineage(lineage)
		}
	}
	return rr
}

// board is where a block's rounds are kept: in memory, or under the claims prefix when
// the run shares its trials, telling through say what it cannot read. Asked for at a
// block's first use, once the sweep is joined.
func (h *roundsHook) board(block *plan.Task, say func(string)) (rounds.Board, error) {
	c := h.claims()
	if c == nil {
		return nil, nil
	}
	b, err := claims.NewBoard(c.Store(), block.Key)
	if err != nil {
		return nil, err
	}
	b.OnUnread(say)
	return b, nil
}

func (h *roundsHook) PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool {
	return h.pause.PauseAt(t, n, reason, otherwise)
}

func (h *roundsHook) Resume(t *plan.Task, _ int) bool { return h.pause.Resume(t) }

func (h *roundsHook) End(t *plan.Task, _ int, status results.Status, reason string) bool {
	return h.pause.End(t, status, reason)
}

// Copy makes from's kept checkpoint t's, at a pbt round: t then resumes from it.
func (h *roundsHook) Copy(ctx context.Context, from, t *plan.Task, n int) error {
	st, err := h.ckpts.store(ctx, t, h.base)
	if err != nil {
		return err
	}
	writer := fmt.Sprintf("%s-pbt%d", plan.Slug(h.runID), n)
	_, err = checkpoint.Copy(ctx, st, plan.Key(from), plan.Key(t), writer, os.TempDir())
	return err
}

// Kept is the step t's kept checkpoint holds, and its values of metric by step up to there
// (the manifest's series); -1 when none is kept or it cannot be read.
func (h *roundsHook) Kept(ctx context.Context, t *plan.Task, metric string) (int, map[int]float64) {
	st, err := h.ckpts.store(ctx, t, h.base)
	if err != nil {
		return -1, nil
	}
	m, err := checkpoint.Read(ctx, st, plan.Key(t))
	if err != nil || m == nil {
		return -1, nil
	}
	values := map[int]float64{}
	for _, p := range m.Series[metric] {
		values[p.Step] = p.Value
	}
	return m.Step, values
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
