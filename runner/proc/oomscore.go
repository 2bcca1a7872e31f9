package proc

import (
	"os"
	"strconv"
	"strings"
)

// oomScoreRaise is how far above runall's own oom_score_adj a task's shell starts: when the
// container's memory limit is hit, the kernel's OOM killer takes the process with the
// highest score, and a task's process then scores above runall's whatever their sizes, so
// that a trial dies, and runall lives to say so and requeue it.
const oomScoreRaise = 500

// oomScoreMax is the most oom_score_adj can be: 1000, always chosen first.
const oomScoreMax = 1000

// TaskOOMScoreAdj is the oom_score_adj a task's processes start with: runall's own raised by
// oomScoreRaise, at most oomScoreMax. Any process may raise its own score, and a child's
// score is its parent's: the shell's reaches everything it starts.
func TaskOOMScoreAdj() int { return taskOOMScoreAdj("/proc/self/oom_score_adj") }

func taskOOMScoreAdj(self string) int {
	own := 0
	if b, err := os.ReadFile(self); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			own = n
		}
	}
	return min(own+oomScoreRaise, oomScoreMax)
}

// oomScorePrefix is what a task's shell runs before its command: it raises its own
// oom_score_adj, so that everything it starts inherits the raised score. The shell does it
// itself, before it can fork: written from runall after the shell started, the score raced
// the shell's first child on a loaded machine (a child forked before the write kept runall's
// score). Best effort: a procfs that is read-only leaves the score as it was (the kernel then
// picks by size alone), and `|| :` leaves $? at 0 for the command. It stays on the command's
// first line, so that the shell's line numbers in its errors are the command's own.
func oomScorePrefix(adj int) string {
	return "{ echo " + strconv.Itoa(adj) + " >/proc/$$/oom_score_adj; } 2>/dev/null || :; "
}
