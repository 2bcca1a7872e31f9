package output

import (
	"slices"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// taskStatus is what an output knows of a task: the Status values plus waiting, which
// Status has no word for.
type taskStatus uint8

const (
	stPending taskStatus = iota
	stWaiting
	stRunning
	stPaused // stopped at its checkpoint, to be resumed: not an end
	stOK
	stFailed
	stIgnored
	stSkipped
	stStopped  // ended because runall was stopped
	stPruned   // stopped early by early-stop: losing, not failed
	stDiverged // its watched metric went NaN or infinite (diverged-on): not failed
	numStatus
)

var statusWords = [numStatus]string{"pending", "waiting", "running", "paused", "ok", "failed", "ignored", "skipped", "stopped", "pruned", "diverged"}

// finished is how many of the counts are of tasks that will not change any more.
func finished(c [numStatus]int) int {
	n := 0
	for s := stOK; s < numStatus; s++ {
		n += c[s]
	}
	return n
}

func (s taskStatus) String() string { return statusWords[s] }

// final reports whether nothing more will happen to a task in this state.
func (s taskStatus) final() bool { return s >= stOK }

// taskNode is one task of the plan as the outputs track it. Events only change fields of
// the node they name; blocks and sequences derive their state when drawn.
type taskNode struct {
	t        *plan.Task
	index    int // position among its siblings
	parent   *taskNode
	children []*taskNode // Parallel or Steps
	seq      bool        // children are Steps, run one after another

	status taskStatus // own state; for a block or sequence only waiting or skipped
	memory uint64     // a GPU trial's memory now
	run    runTimes   // when its attempts ran, and how the last ended
	reason string     // waiting, skipped or failure reason
	last   string     // last output line, raw (cleaned when drawn)

	label string   // cached display name; see runState.label
	est   estimate // Estimate, asked once
}

// told is a trial's progress as its output said it, and when.
type told struct {
	p  *results.Progress
	at time.Time
}

// runTimes are when a task's attempts ran, and how the last one ended.
type runTimes struct {
	started  time.Time // the current or last attempt
	first    time.Time // the first attempt
	ended    time.Time
	duration time.Duration
	exitCode int
}

// estimate is how long a task took in earlier runs, asked of Options.Estimate once, and how
// far its output says the running attempt came (TaskProgress), which says its time left.
type estimate struct {
	d         time.Duration
	ok, asked bool
	told      told
}

func (n *taskNode) isLeaf() bool { return len(n.children) == 0 }

// state is the node's status, derived from its children for blocks and sequences.
func (n *taskNode) state() taskStatus {
	if n.isLeaf() || n.status == stSkipped {
		return n.status
	}
	var c [numStatus]int
	for _, k := range n.children {
		c[k.state()]++
	}
	total, done := len(n.children), finished(c)
	switch {
	case done == total && c[stFailed] > 0:
		return stFailed
	case done == total && c[stStopped] > 0:
		return stStopped
	case done == total && c[stIgnored] > 0:
		return stIgnored
	case done == total && c[stSkipped] == total:
		return stSkipped
	case done == total:
		return stOK
	case c[stRunning] > 0 || done > 0:
		return stRunning
	case c[stPaused] > 0:
		return stPaused
	case n.status == stWaiting || c[stWaiting] > 0:
		return stWaiting
	}
	return stPending
}

// span is when a node first started and how long it has run (or ran) by now.
func (n *taskNode) span(now time.Time) (start time.Time, d time.Duration) {
	if n.isLeaf() {
		switch {
		case n.status == stRunning:
			return n.run.started, now.Sub(n.run.started)
		case n.status.final() && !n.run.started.IsZero():
			return n.run.started, n.run.duration
		}
		return time.Time{}, 0
	}
	var end time.Time
	running := false
	for _, k := range n.children {
		s, d := k.span(now)
		if s.IsZero() {
			continue
		}
		if start.IsZero() || s.Before(start) {
			start = s
		}
		if e := s.Add(d); e.After(end) {
			end = e
		}
		running = running || k.state() == stRunning
	}
	if running {
		end = now
	}
	return start, end.Sub(start)
}

// current is the step of a sequence that runs now or ran last, for its row's detail.
func (n *taskNode) current() *taskNode {
	var last *taskNode
	for _, k := range n.children {
		switch k.state() {
		case stRunning, stWaiting:
			return k.current()
		case stFailed:
			return k.current()
		case stPending:
		default:
			last = k
		}
	}
	if last == nil {
		return n
	}
	return last.current()
}

// runState is every task's state, built from the plan and kept current from events.
type runState struct {
	top      []*taskNode
	nodes    map[*plan.Task]*taskNode
	leaves   []*taskNode // commands, in plan order
	parentOf func(*plan.Task) (*plan.Task, bool)
	hidden   map[*taskNode]bool // search: templates whose trials stand in their place
}

func newRunState(p *plan.Plan, parentOf func(*plan.Task) (*plan.Task, bool)) *runState {
	rs := &runState{nodes: make(map[*plan.Task]*taskNode), parentOf: parentOf, hidden: map[*taskNode]bool{}}
	if p != nil {
		for _, t := range p.Tasks {
			rs.top = append(rs.top, rs.add(t, nil, len(rs.top)))
		}
	}
	return rs
}

func (rs *runState) add(t *plan.Task, parent *taskNode, index int) *taskNode {
	n := &taskNode{t: t, parent: parent, index: index, run: runTimes{exitCode: -1}}
	rs.nodes[t] = n
	kids := t.Parallel
	if len(kids) == 0 {
		kids, n.seq = t.Steps, len(t.Steps) > 0
	}
	if len(kids) == 0 {
		rs.leaves = append(rs.leaves, n)
	}
	for i, k := range kids {
		n.children = append(n.children, rs.add(k, n, i))
	}
	return n
}

// node returns t's node. A task the run made (a sampler's trial) joins its block, in the
// place of the search: template, which is counted again only if it ends itself (its
// sampler failed); any other task the plan does not list (a test's, say) becomes a new
// top-level command.
func (rs *runState) node(t *plan.Task) *taskNode {
	if n, ok := rs.nodes[t]; ok {
		if rs.hidden[n] {
			delete(rs.hidden, n)
			n.parent.children = append(n.parent.children, n)
		}
		return n
	}
	if rs.parentOf != nil {
		if p, ok := rs.parentOf(t); ok {
			return rs.made(t, rs.node(p))
		}
	}
	n := &taskNode{t: t, index: len(rs.top), run: runTimes{exitCode: -1}}
	rs.nodes[t] = n
	rs.top = append(rs.top, n)
	rs.leaves = append(rs.leaves, n)
	return n
}

// made adds t (and its steps) under parent, where the search: template stood while it was
// pending.
func (rs *runState) made(t *plan.Task, parent *taskNode) *taskNode {
	if n, ok := rs.nodes[t]; ok {
		return n // added with its trial
	}
	parent.children = slices.DeleteFunc(parent.children, func(k *taskNode) bool {
		if k.t.Search != nil && k.status == stPending {
			rs.hidden[k] = true
			return true
		}
		return false
	})
	n := rs.add(t, parent, len(parent.children))
	parent.children = append(parent.children, n)
	return n
}

// label is how outputs name a task on one line: its name, after its sequence's for a step
// ("trial lr=0.01 / eval") so that grepping a trial's name finds all of its lines.
func (rs *runState) label(n *taskNode) string {
	if n.label == "" {
		n.label = cleanName(n.t.Name)
		if n.label == "" {
			n.label = cleanName(n.t.Cmd)
		}
		if p := n.parent; p != nil && p.seq {
			n.label = rs.label(p) + " / " + n.label
		}
	}
	return n.label
}

// apply records ev. It reports whether a waiting task's reason changed, which is when the
// plain and JSON outputs print a waiting event. Output lines only replace the last line,
// so that a flood of them stays cheap.
func (rs *runState) apply(ev event.Event, now time.Time) (n *taskNode, changed bool) {
	if ev.Task == nil {
		return nil, false
	}
	n = rs.node(ev.Task)
	switch ev.Kind {
	case event.TaskOutput:
		if ev.Task.ShowOutput && !blankUpdate(ev.Line) {
			n.last = ev.Line
		}
	case event.TaskWaiting:
		changed = n.status != stWaiting || waitGist(n.reason) != waitGist(ev.Reason)
		n.status, n.reason = stWaiting, ev.Reason
	case event.TaskStarted:
		n.status, n.reason, n.last, n.est.told = stRunning, "", "", told{}
		n.run.started = now
		if n.run.first.IsZero() {
			n.run.first = now
		}
		for p := n.parent; p != nil; p = p.parent {
			if p.status == stWaiting {
				p.status = stPending
			}
		}
	case event.TaskEnded:
		n.run.ended, n.run.duration, n.run.exitCode, n.reason = now, ev.Duration, ev.ExitCode, ev.Reason
		if n.run.duration == 0 && !n.run.started.IsZero() {
			n.run.duration = now.Sub(n.run.started)
		}
		switch {
		case ev.End == event.EndRequeue: // the attempt ended but the trial goes again (out of GPU memory)
			n.status = stWaiting
		case ev.End == event.EndPause: // stopped at its checkpoint; it goes again when it is resumed
			n.status = stPaused
		case ev.Status == results.StatusOK:
			n.status = stOK
		case ev.Status == results.StatusFailed:
			n.status = stFailed
		case ev.Status == results.StatusIgnored:
			n.status = stIgnored
		case ev.Status == results.StatusSkipped:
			n.status = stSkipped
		case ev.Status == results.StatusPruned:
			n.status = stPruned
		case ev.Status == results.StatusDiverged:
			n.status = stDiverged
		default: // stopped: by runall's stop, or by a consumer with a status of its own
			n.status = stStopped
		}
	case event.TaskMemory:
		n.memory = ev.Memory
	case event.TaskProgress:
		n.est.told = told{ev.Progress, now}
	case event.TaskSkipped:
		n.reason = ev.Reason
		skipPending(n)
	}
	return n, changed
}

// skipPending marks n and whatever under it has not run as skipped.
func skipPending(n *taskNode) {
	if n.status == stPending || n.status == stWaiting {
		n.status = stSkipped
	}
	for _, k := range n.children {
		skipPending(k)
	}
}

// total is how many commands there are: a search: template whose trials stand in its place
// is not one.
func (rs *runState) total() int {
	n := len(rs.leaves)
	for k := range rs.hidden {
		if k.isLeaf() {
			n--
		}
	}
	return n
}

// counts is how many commands are in each state. Waiting counts the tasks that wait, at
// whatever level the scheduler admits them (a trial's sequence or its command); the
// commands under a waiting sequence are not also counted as pending.
func (rs *runState) counts() (c [numStatus]int) {
	for _, n := range rs.leaves {
		if rs.hidden[n] {
			continue
		}
		s := n.status
		if s == stPending && waitingAncestor(n) {
			continue
		}
		c[s]++
	}
	for _, n := range rs.nodes {
		if !n.isLeaf() && n.status == stWaiting {
			c[stWaiting]++
		}
	}
	return c
}

func waitingAncestor(n *taskNode) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p.status == stWaiting {
			return true
		}
	}
	return false
}

// inState returns the nodes (at any level) in state s, in plan order.
func (rs *runState) inState(s taskStatus) []*taskNode {
	var out []*taskNode
	for _, n := range rs.nodes {
		if n.status == s && (n.isLeaf() || s == stWaiting) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *taskNode) int { return a.t.ID - b.t.ID })
	return out
}
