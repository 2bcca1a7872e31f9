package checkpoint

import (
	"fmt"
	"sync"
	"time"
)

// restlessLooks is how many looks in a row that find the directory changing (still being
// written when looked at again, or changed while it was copied) make a directory that
// never holds still: said once, with the remedy.
const restlessLooks = 5

// notes is what a keeper tells the trial's output, each thing once: a directory that never
// holds still, and the entries its copies leave out.
type notes struct {
	say   func(string)
	dir   string
	every time.Duration

	mu       sync.Mutex
	looks    int    // looks in a row that found the directory changing
	restless bool   // said that it never holds still
	left     string // the entries left out, as last said
	unread   string // why the directory could not be looked at, as last said
}

func (n *notes) sayf(format string, args ...any) {
	if n.say != nil {
		n.say("checkpoint: " + fmt.Sprintf(format, args...))
	}
}

// moving counts a look that found the directory changing; explicit is whether the script
// prints runall-checkpoint lines (then only moving logs can help).
func (n *notes) moving(explicit bool) {
	n.mu.Lock()
	n.looks++
	tell := n.looks == restlessLooks && !n.restless
	n.restless = n.restless || tell
	n.mu.Unlock()
	if !tell {
		return
	}
	remedy := "print a line `runall-checkpoint step=N` once each checkpoint is saved whole, or move files that are written all the time (logs) out of it"
	if explicit {
		remedy = "move files that are written all the time (logs) out of it: a copy is kept only of a directory that holds still while it is copied"
	}
	n.sayf("%s changed at each of the last %d looks (every %v), so no copy of it is kept while it does; %s",
		n.dir, restlessLooks, n.every, remedy)
}

// still takes a copy of s that held still: the count starts again, and entries left out
// of it are said when they differ from those last said.
func (n *notes) still(s scan) {
	left := s.leftOut()
	n.mu.Lock()
	n.looks = 0
	tell := left != n.left
	n.left = left
	n.mu.Unlock()
	if tell && left != "" {
		n.sayf("left out of the copy of %s: %s; a link is kept only when its target stays inside the directory, and named pipes, sockets and devices never are", n.dir, left)
	}
}

// unscanned tells why the directory could not be looked at (a link in its place, a
// folder that cannot be read), once until the reason changes: no copy is kept meanwhile.
func (n *notes) unscanned(err error) {
	n.mu.Lock()
	tell := err.Error() != n.unread
	n.unread = err.Error()
	n.mu.Unlock()
	if tell {
		n.sayf("no copy is kept while %v", err)
	}
}
