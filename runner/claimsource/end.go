package claimsource

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// record records a claimed trial's end for the whole sweep, unless its claim was lost: then
// another runall runs it, and this one's outcome is not the sweep's.
func (c *Claimer) record(ctx context.Context, t *plan.Task) {
	tl := c.leases.get(t)
	if tl == nil {
		return
	}
	defer c.leases.drop(t)
	if tl.lease.Err() != nil {
		return // its commands were stopped, saying why
	}
	p := c.o.Plan
	ts := c.o.Run.Results(t)
	failed, final := ended(ts)
	if why := c.givesBack(); why != "" && !final {
		// Stopped by SIGTERM/SIGINT (preemption, eviction, kubectl delete), or every GPU
		// here went out of service: the trial did not fail for good. Give it back so another
		// runall runs it at once.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		tl.lease.Release(ctx)
		c.o.Run.Say(fmt.Sprintf("%s: %s; its claim is given back for another runall", t.Name, why))
		return
	}
	part := &results.Run{File: p.File, RunID: c.o.RunID, Status: results.StatusOK, Objective: c.o.Objective, Objectives: c.o.Objectives, Tasks: ts,
		LearnedGPUMemory: c.o.Learned()}
	if failed {
		part.Status = results.StatusFailed
	}
	c.o.Mask.All(part) // the results' gate, for the part of them the other runalls read
	body, err := json.Marshal(part)
	if err == nil {
		err = tl.lease.Finish(ctx, claims.Record{Failed: failed, Result: body})
	}
	switch {
	case err == nil:
	case errors.Is(err, claims.ErrDone):
		c.o.Run.Say(fmt.Sprintf("%s: %v; this run's outcome is not recorded", t.Name, err))
	default:
		c.o.Run.Say(fmt.Sprintf("%s: could not record its end: %v", t.Name, err))
	}
	if failed {
		c.setFailed()
	}
}

// givesBack is why the trials this runall stops go back to the sweep: a signal stopped
// it, or every GPU here is out of service; "" when they do not.
func (c *Claimer) givesBack() string {
	if sig := c.o.Run.StoppedBy(); sig != 0 {
		return fmt.Sprintf("stopped by %v", sig)
	}
	return c.o.Run.GivesBack()
}

// ended says whether a trial's commands, as the run recorded them, failed, and whether they
// ended it for good whatever then stopped runall: ok, ignored, or ended by runall's own rule
// (pruned, diverged: another runall would end it the same way). Anything else under a signal
// goes back to the sweep.
func ended(ts []results.Task) (failed, final bool) {
	final = true
	for _, res := range ts {
		failed = failed || res.Status == results.StatusFailed
		switch res.Status {
		case results.StatusOK, results.StatusIgnored, results.StatusPruned, results.StatusDiverged:
		default:
			final = false
		}
	}
	return failed, final
}

// setFailed records that a trial of the sweep failed.
func (c *Claimer) setFailed() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// SweepFailed reports whether a trial of the sweep failed, as far as this runall knows; a
// nil *Claimer (no claims) knows of none.
func (c *Claimer) SweepFailed() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// conclude, once every trial is done, reads the sweep's merged results, writing them
// under the prefix when no runall did yet; it reports whether a trial failed.
func (c *Claimer) conclude(ctx context.Context) (failed bool, err error) {
	view, err := c.refresh(ctx) // kept: the sweep's last figures (Figures) count from it
	if err != nil {
		return false, err
	}
	for _, k := range c.order {
		if !view.Done[k] {
			return false, nil // stopped early: the runalls still at work finish it
		}
	}
	if b, err := c.sweep.Results(ctx); err == nil {
		var res results.Run
		if err := json.Unmarshal(b, &res); err == nil && len(res.Tasks) > 0 {
			return res.Status == results.StatusFailed, nil
		}
	}
	recs, err := c.sweep.Records(ctx, c.order)
	if err != nil {
		return false, err
	}
	res, err := mergeRecords(c.o, recs)
	if err != nil {
		return false, err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return false, err
	}
	if err := c.sweep.WriteResults(ctx, append(b, '\n')); err != nil {
		return false, err
	}
	c.o.Run.Say("claims: every trial is done; merged results in " + c.where + claims.ResultsKey)
	return res.Status == results.StatusFailed, nil
}

// mergeRecords makes one results file of the trials' records, through results.Merge as
// the shards of a sweep are: each command as the runall that ran it recorded it (its log
// file prefixed with that runall's host), each runall's run id, the objective, the best
// trial and the learned needs. A record that cannot be read is an error that names it.
func mergeRecords(o Options, recs []claims.Record) (*results.Run, error) {
	var runs []*results.Run
	for _, rec := range recs {
		part, err := recordedPart(rec)
		if err != nil {
			return nil, fmt.Errorf("record %s%s.json: %w", claims.DoneDir, rec.Key, err)
		}
		for i, t := range part.Tasks {
			if t.LogFile != "" {
				part.Tasks[i].LogFile = rec.Owner.Host + ":" + t.LogFile
			}
		}
		runs = append(runs, part)
	}
	merged := results.Merge(runs)
	merged.File = o.Plan.File
	if merged.Objective == nil {
		merged.Objective, merged.Objectives = o.Objective, o.Objectives
		merged.Assess()
	}
	return merged, nil
}

// recordedPart reads what one runall recorded of one trial: its part of the run. Records
// written before they held a run hold its commands alone.
func recordedPart(rec claims.Record) (*results.Run, error) {
	part := &results.Run{RunID: rec.Owner.RunID, Status: results.StatusOK}
	if len(bytes.TrimSpace(rec.Result)) > 0 && bytes.TrimSpace(rec.Result)[0] == '[' {
		if err := json.Unmarshal(rec.Result, &part.Tasks); err != nil {
			return nil, err
		}
	} else if err := json.Unmarshal(rec.Result, part); err != nil {
		return nil, err
	}
	if len(part.Tasks) == 0 {
		return nil, errors.New("it records no command")
	}
	if rec.Failed {
		part.Status = results.StatusFailed
	}
	part.RunID = cmp.Or(part.RunID, rec.Owner.RunID)
	for _, t := range part.Tasks {
		part.StartedAt = earliest(part.StartedAt, t.StartedAt)
		part.FinishedAt = latest(part.FinishedAt, t.FinishedAt)
	}
	return part, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// End concludes the sweep after the run's tasks, and says what claiming cost. A
// sweep that cannot be concluded (a record that cannot be read) fails the run.
func (c *Claimer) End(ctx context.Context) error {
	if c == nil || c.o.Run.Halted() {
		return nil
	}
	failed, err := c.conclude(ctx)
	if err != nil {
		err = fmt.Errorf("claims %s: could not conclude the sweep: %w", c.where, err)
	}
	if failed {
		c.setFailed()
	}
	n := c.sweep.Requests()
	c.o.Run.Say(fmt.Sprintf("claims: %d requests (%d GET, %d PUT, %d LIST)", n.Total(), n.Get, n.Put, n.List))
	return err
}

// SkipComplete skips everything when the sweep was already complete: a rerun of a finished
// Job does nothing. Merged results that cannot be written fail it.
func (c *Claimer) SkipComplete(ctx context.Context) error {
	life := c.o.Run
	life.SkipAll(c.o.Plan.Tasks, "not started: every trial of the sweep under "+c.where+" is done")
	// A rerun exits with the sweep's status: 0 when every trial passed. A failed sweep stays
	// failed, so that a Job's retries do not turn it into a Job that completed.
	failed, err := c.conclude(ctx)
	if err != nil {
		return fmt.Errorf("claims %s: could not write the merged results: %w", c.where, err)
	}
	if failed {
		c.setFailed()
		life.Say("claims: a trial of the sweep failed (see " + c.where + claims.ResultsKey + ")")
	}
	life.Say("claims: every trial of the sweep under " + c.where + " is done; nothing to do")
	return nil
}
