package admit

import "github.com/runall/runall/runner/needs"

// The book of needs' figures the GPU tests check against; its rules are tested for both
// resources in runner/needs.
func learnedNeed(peak uint64) uint64 { return needs.LearnedNeed(peak) }

const (
	learnSettle   = needs.LearnSettle
	victimRetries = needs.VictimRetries
)

// memNeeds keeps a test's learned needs.
type memNeeds map[string]uint64

func (m memNeeds) Learned(group string) (uint64, bool) { n, ok := m[group]; return n, ok }

func (m memNeeds) SetLearned(group, _ string, need uint64) { m[group] = need }

// raisedNeed is what the book gives the trial with id now: its raised need, when it has one.
func (a *Admitter) raisedNeed(id int) uint64 {
	n, _, _ := a.book.Need(needs.Request{ID: id, Auto: true, Group: "\x00none"})
	return n
}

// groupNeed is what the book gives a trial of group that declared nothing: the need its
// siblings' failures raised the group to.
func (a *Admitter) groupNeed(group string) uint64 {
	n, _, _ := a.book.Need(needs.Request{ID: -1, Group: group})
	return n
}
