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

// raiseOOMScore sets the oom_score_adj of a task's shell as soon as it runs: the shell has
// not yet started anything then (it is still reading its command), so what it starts
// inherits the raised score. Best effort: a procfs that is read-only leaves the score as it
// was, and the kernel then picks by size alone.
// The file is opened without O_TRUNC: procfs takes the value written, and a truncating open
// is what make check fences (internal/limits).
func raiseOOMScore(pid, adj int) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString(strconv.Itoa(adj))
	_ = f.Close()
}
