package hostadmit

import "github.com/runall/runall/runner/needs"

// The book of needs' figures the host tests check against; its rules are tested for both
// resources in runner/needs.
const (
	learnSettle   = needs.LearnSettle
	victimRetries = needs.VictimRetries
)

// memoryNeeds keeps a test's learned needs.
type memoryNeeds struct{ m map[string]uint64 }

func (n *memoryNeeds) Learned(group string) (uint64, bool) { v, ok := n.m[group]; return v, ok }

func (n *memoryNeeds) SetLearned(group, _ string, need uint64) { n.m[group] = need }
