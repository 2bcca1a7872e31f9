package rounds

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/plan"
)

// Population-based training's part of a block: the copy of a donor's checkpoint an exploit
// needs, and what a trial runs as after its exploits.

// exploit sees to it that t continues from a copy of the donor's checkpoint, as pbt decided
// at e.Step: true once the copy is there. One runall makes it (the first to take it on);
// the others wait for the board to say it is made.
func (blk *block) exploit(ctx context.Context, t *plan.Task, e *earlystop.Exploit) bool {
	k, donor := blk.key(t), blk.roster.trials[e.From]
	ck := copyKey(e.Step, k)
	if blk.seen.copied[ck] {
		return true
	}
	if !blk.seen.taken[ck] {
		mine, err := blk.store().TakeCopy(ctx, e.Step, k)
		if err != nil || !mine {
			if err != nil {
				blk.say(fmt.Sprintf("pbt: %s: %v (trying again)", t.Name, err))
			}
			return false
		}
		blk.seen.taken[ck] = true
	}
	if err := blk.pauser.Copy(ctx, donor, t, e.Step); err != nil {
		blk.say(fmt.Sprintf("pbt: %s: copy the checkpoint of %s: %v (trying again)", t.Name, donor.Name, err))
		return false
	}
	if err := blk.store().Copied(ctx, e.Step, k); err != nil {
		blk.say(fmt.Sprintf("pbt: %s: %v (trying again)", t.Name, err))
		return false
	}
	blk.seen.copied[ck] = true
	blk.say(fmt.Sprintf("pbt: %s (%s %s at step %d) continues from %s's checkpoint with %s",
		t.Name, blk.cfg.Metric, num(e.Value), e.Step, donor.Name, paramsText(fromRule(e.Params))))
	return true
}

// copyKey names pbt's copy for trial at a round's step on the board.
func copyKey(step int, trial string) string { return strconv.Itoa(step) + "/" + trial }

// variant is t with pbt's values for it, and its lineage. A shared board is read first: t
// may start here after a round another runall decided, and whose values this one has not
// read yet.
func (blk *block) variant(t *plan.Task) (*plan.Task, []Exploit) {
	if blk.shared && blk.cfg.Method == earlystop.PBT {
		blk.reread(context.Background())
	}
	view := blk.seen.snapshot()
	k := blk.key(t)
	a := blk.rule.Action(view, k)
	var lineage []Exploit
	for _, e := range blk.rule.Lineage(view, k) {
		from := e.From
		if d := blk.roster.trials[e.From]; d != nil {
			from = d.Name
		}
		lineage = append(lineage, Exploit{Step: e.Step, From: from, Value: e.Value, Params: fromRule(e.Params)})
	}
	if a.Params == nil || t.Space == nil {
		return t, lineage
	}
	return t.Variant(fromRule(a.Params)[len(t.Space.Template.Params):]), lineage
}

func toRule(ps []plan.Param) []earlystop.Param {
	out := make([]earlystop.Param, len(ps))
	for i, p := range ps {
		out[i] = earlystop.Param{Name: p.Name, Value: p.Value}
	}
	return out
}

func fromRule(ps []earlystop.Param) []plan.Param {
	out := make([]plan.Param, len(ps))
	for i, p := range ps {
		out[i] = plan.Param{Name: p.Name, Value: p.Value}
	}
	return out
}

func paramsText(ps []plan.Param) string {
	s := make([]string, 0, len(ps))
	for _, p := range ps {
		s = append(s, p.Name+"="+p.Value)
	}
	return strings.Join(s, " ")
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }
