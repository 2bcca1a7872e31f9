package output

import "strings"

// waitingFor reports whether a task other than n waits for reason now: plain output says a
// wait that many trials share once.
func (rs *runState) waitingFor(reason string, n *taskNode) bool {
	for _, m := range rs.leaves {
		if m != n && m.status == stWaiting && m.reason == reason {
			return true
		}
	}
	for _, m := range rs.nodes {
		if m != n && !m.isLeaf() && m.status == stWaiting && m.reason == reason {
			return true
		}
	}
	return false
}

// waitGist is what a wait is about, without the measurements that follow the first ";"
// ("needs 7.0 GiB; GPU0 5.2 GiB free, ..."): plain output says so once, not every time the
// numbers move. The live view and the status line show the numbers.
func waitGist(reason string) string {
	gist, _, _ := strings.Cut(reason, ";")
	return gist
}
