package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/plan"
)

// Shard is this process's share of a sweep spread over several: trial k (in file order,
// counting every parallel block's children) runs in shard k mod Count.
type Shard struct{ Index, Count int }

// Active reports whether the sweep is spread over several processes.
func (s Shard) Active() bool { return s.Count > 1 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Parse reads "I/N" (0 ≤ I < N).
func Parse(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || idx < 0 || idx >= count {
		return Shard{}, fmt.Errorf("invalid shard %q: want I/N with 0 ≤ I < N, such as 0/4", s)
	}
	return Shard{Index: idx, Count: count}, nil
}

// Apply keeps this shard's share of p's trials: the k-th trial of the file (counting
// every parallel block's children in file order) belongs to shard k mod N. Setup tasks run
// in every shard. A block left with no trial is dropped.
func Apply(p *plan.Plan, s Shard) *plan.Plan {
	if !s.Active() {
		return p
	}
	k := 0
	var kept []*plan.Task
	for _, t := range p.Tasks {
		if !t.IsBlock() {
			kept = append(kept, t)
			continue
		}
		var mine []*plan.Task
		for _, c := range t.Parallel {
			if k%s.Count == s.Index {
				mine = append(mine, c)
			}
			k++
		}
		if len(mine) > 0 {
			b := *t
			b.Parallel = mine
			kept = append(kept, &b)
		}
	}
	sharded := *p
	sharded.Tasks = kept
	return &sharded
}
