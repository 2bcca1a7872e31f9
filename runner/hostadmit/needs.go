package hostadmit

import (
	"fmt"
	"time"

	"github.com/runall/runall/size"
)

// needBook decides what each trial needs: its declared need, the need its group learned
// (memory: auto), or the need an OOM kill raised it to; and which trial learns its group's.
// The admitter holds its lock while it asks.
type needBook struct {
	needs       Needs
	oomRetries  int
	learning    map[string]*Placement // group → the trial that learns its need
	raised      map[int]uint64        // trial ID → need raised after an OOM kill
	groupRaised map[string]uint64     // group → need a sibling's OOM kill showed
	requeues    map[int]int           // trial ID → times requeued after an OOM kill
	victims     map[int]int           // trial ID → of those, times it had stayed within its need
}

func newNeedBook(needs Needs, oomRetries int) *needBook {
	return &needBook{needs: needs, oomRetries: oomRetries, learning: map[string]*Placement{},
		raised: map[int]uint64{}, groupRaised: map[string]uint64{}, requeues: map[int]int{}, victims: map[int]int{}}
}

// learnSettle is how long a learning trial's memory must stay flat before the rest of its
// group is admitted at the learned need; one that ends sooner is learned from at its end.
const learnSettle = 10 * time.Second

// need is what req needs now, whether it is the trial that learns its group's need,
// or why it must wait.
func (b *needBook) need(req Request) (need uint64, learning bool, wait string) {
	if n, ok := b.raised[req.ID]; ok {
		return n, false, ""
	}
	if !req.Auto {
		return max(req.Memory, b.groupRaised[req.Group]), false, ""
	}
	if n, ok := b.needs.Learned(req.Group); ok {
		return max(n, b.groupRaised[req.Group]), false, ""
	}
	if p, ok := b.learning[req.Group]; ok {
		return 0, false, fmt.Sprintf("waits for %q to measure the group's host memory", p.req.Name)
	}
	return 0, true, ""
}

// settle learns from the learning trials whose memory has stopped growing.
func (b *needBook) settle(now time.Time) {
	for _, p := range b.learning {
		if p.peak > 0 && now.Sub(p.grewAt) >= learnSettle {
			b.learn(p)
		}
	}
}

// learn fixes a group's need from its learning trial's peak; the trial keeps running,
// now reserving what it taught.
func (b *needBook) learn(p *Placement) {
	need := learnedNeed(p.peak)
	b.needs.SetLearned(p.req.Group, p.req.Name, need)
	delete(b.learning, p.req.Group)
	p.learning, p.Need = false, need
}

// endLearning learns from a learning trial that ends before its memory settled. One
// that held nothing teaches nothing: the group's next trial learns instead.
func (b *needBook) endLearning(p *Placement) {
	if !p.learning || b.learning[p.req.Group] != p {
		return
	}
	if p.peak > 0 {
		b.learn(p)
		return
	}
	delete(b.learning, p.req.Group)
}

// learnedNeed pads a measured peak: sampling can miss a short spike.
func learnedNeed(peak uint64) uint64 {
	return roundUp(peak+peak/20, 64<<20)
}

func (b *needBook) requeue(p *Placement, most uint64) (need uint64, requeues int, err error) {
	id := p.req.ID
	measured := p.peak
	if measured > most {
		return 0, b.requeues[id], fmt.Errorf("%w: it was killed holding %s; the container's limit gives %s after the margin",
			ErrNeverFits, size.Format(measured), size.Format(most))
	}
	cur := p.Need
	victim := cur > 0 && measured <= cur+cur/20 && b.oomRetries > 0
	charged := b.requeues[id] - b.victims[id]
	switch {
	case victim && b.victims[id] >= victimRetries:
		return 0, b.requeues[id], fmt.Errorf("killed by the OOM killer %d times within its need of %s: other trials use more host memory than they declared",
			b.victims[id]+1, size.Format(cur))
	case !victim && charged >= b.oomRetries:
		return 0, b.requeues[id], fmt.Errorf("killed by the OOM killer %d times (oom-retries: %d); it held %s when killed",
			charged+1, b.oomRetries, size.Format(measured))
	}
	b.requeues[id]++
	if victim {
		b.victims[id]++
		need = cur
	} else {
		need = max(2*cur, measured+measured/2, 64<<20)
		b.groupRaised[p.req.Group] = max(b.groupRaised[p.req.Group], learnedNeed(measured))
		if p.req.Auto {
			if learned, _ := b.needs.Learned(p.req.Group); learnedNeed(measured) > learned {
				b.needs.SetLearned(p.req.Group, p.req.Name, learnedNeed(measured))
			}
		}
	}
	need = min(roundUp(need, 64<<20), most)
	b.raised[id] = need
	return need, b.requeues[id], nil
}
