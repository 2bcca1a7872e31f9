package needs

import "fmt"

// Requeue is the book's answer to a trial that ran out of memory: whether it goes again,
// and with what need; requeues counts its requeues so far, this one included. measured is
// the need its end showed (0: not known): what it held, and for GPUs what it tried to
// allocate; most is the most one trial can have. The admitter fails a trial whose measured
// need is beyond most before it asks.
//
// A trial that went beyond what it reserved under-declared it: its need becomes the
// measured one grown by the policy's GrowPercent, and at least twice what it had (on GPUs
// twice the measured one, so that one that under-declared by 5x fits by its second
// requeue); its waiting siblings (the other copies of its for-each or matrix task) wait
// for the measured need too. One whose need could not be measured gets twice its need (at
// least a Step). Never beyond most.
//
// A trial that stayed within what it reserved ran out because another one did not: it goes
// again with the same need, and that requeue does not count against oom-retries (up to
// VictimRetries of them; none with oom-retries: 0), so that an honest trial is not failed
// for a neighbour's lie.
func (b *Book) Requeue(t *Trial, measured, most uint64) (need uint64, requeues int, err error) {
	id, p := t.req.ID, b.policy
	cur := max(t.reserve, t.need)
	if t.settled > 0 { // beyond its settled need, it is no victim of another's
		cur = t.settled
	}
	victim := measured > 0 && measured <= cur+cur/20 && p.OOMRetries > 0
	charged := b.requeues[id] - b.victims[id]
	switch {
	case victim && b.victims[id] >= VictimRetries:
		return 0, b.requeues[id], fmt.Errorf("%s %d times within its need of %s: other trials use more %s than they declared",
			p.RanOut, b.victims[id]+1, formatSize(cur), p.Resource)
	case !victim && charged >= p.OOMRetries:
		return 0, b.requeues[id], fmt.Errorf("%s %d times (oom-retries: %d); "+p.Measured,
			p.RanOut, charged+1, p.OOMRetries, formatSize(measured))
	}
	b.requeues[id]++
	b.abandonLearning(t)
	t.raised = false // its need is decided here, not settled from this attempt's peak
	switch {
	case victim:
		b.victims[id]++
		need = max(cur, measured)
	case measured == 0: // nothing measured, nothing said: grow boldly all the same
		need = 2 * max(cur, p.Step)
	default:
		need = max(2*cur, measured*p.GrowPercent/100)
		b.groupRaised[t.req.Group] = max(b.groupRaised[t.req.Group], LearnedNeed(measured))
	}
	need = min(roundUp(need, p.Step), most)
	b.raised[id] = need
	if t.req.Auto && measured > 0 {
		b.learnAtLeast(t.req, LearnedNeed(measured))
	}
	return need, b.requeues[id], nil
}

// VictimRetries bounds the requeues of a trial that ran out of memory within its own need.
const VictimRetries = 3

// abandonLearning ends the learning of a learner that ran out of memory: what it held when
// it failed is no need to learn from (Requeue records the need it showed instead).
func (b *Book) abandonLearning(t *Trial) {
	if t.learning && b.learning[t.req.Group] == t {
		delete(b.learning, t.req.Group)
	}
	t.learning = false
}

// Requeues is how often the trial with id was requeued after running out of memory.
func (b *Book) Requeues(id int) int { return b.requeues[id] }
