package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseShard reads "I/N" (0 ≤ I < N).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || idx < 0 || idx >= count {
		return Shard{}, fmt.Errorf("invalid shard %q: want I/N with 0 ≤ I < N, such as 0/4", s)
	}
	return Shard{Index: idx, Count: count}, nil
}

// applyShard keeps this shard's share of the trials: the k-th trial of the file (counting
// every parallel block's children in file order) belongs to shard k mod N. Setup tasks run
// in every shard. A block left with no trial is dropped.
func (r *run) applyShard() {
	s := r.opts.Shard
	if !s.active() {
		return
	}
	k := 0
	var kept []*Task
	for _, t := range r.plan.Tasks {
		if !t.IsBlock() {
			kept = append(kept, t)
			continue
		}
		var mine []*Task
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
	plan := *r.plan
	plan.Tasks = kept
	r.plan = &plan
}

// NeedsGPU reports whether any task asks for GPU admission.
func (p *Plan) NeedsGPU() bool { return firstGPUTask(p) != nil }

func firstGPUTask(p *Plan) *Task {
	var found *Task
	walkAll(p.Tasks, func(t *Task) {
		if found == nil && t.GPU != nil {
			found = t
		}
	})
	return found
}
