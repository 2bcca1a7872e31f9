package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// nodesPerTask is how many YAML nodes, aliases followed, a file may hold per task it may
// expand to (and at least minNodeBudget): anchors repeated through aliases would otherwise
// decode into more tasks than the file's size suggests (the "billion laughs").
const (
	nodesPerTask  = 40
	minNodeBudget = 4_000_000
)

// countLimit is a count that stops growing past math.MaxInt64/2: a product of matrix sizes
// cannot overflow.
const countLimit = math.MaxInt64 / 2

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > countLimit/b {
		return countLimit
	}
	return a * b
}

func satAdd(a, b int64) int64 { return min(a+b, countLimit) }

// expansionSite is the for-each or matrix that contributes most to a file's expansion.
type expansionSite struct {
	task  *taskfile.Task
	count int64 // the tasks it makes, its parents' copies included
}

// checkExpansion counts what tasks would expand to, before any copy is made, and reports a
// file that would make more than limit tasks at the for-each or matrix that makes the most.
func (l *loader) checkExpansion(tasks []*taskfile.Task, limit int) bool {
	var worst expansionSite
	total := countExpansion(tasks, 1, &worst)
	if total <= int64(limit) {
		return true
	}
	at, what := Pos{File: l.src.path}, "the file"
	split := "split the sweep into files or shards, "
	if worst.task != nil && worst.task.Search != nil {
		split = "" // search: cannot be sharded: asked trials are no list known before the run
	}
	if worst.task != nil {
		key := "for-each"
		switch {
		case len(worst.task.Matrix) > 0:
			key = "matrix"
		case worst.task.Has("trials"):
			key = "trials"
		}
		at = l.src.pos(worst.task.Keys[key])
		what = fmt.Sprintf("%s: %s make %s tasks, and the file", key, describeCopies(worst.task), countText(worst.count))
	}
	l.src.problems = append(l.src.problems, Problem{Pos: at, Msg: fmt.Sprintf(
		"%s %s in all, more than max-tasks (%d): use fewer values, %sor raise max-tasks in config: (or --max-tasks)",
		what, countText(total), limit, split)})
	return false
}

// countExpansion is how many plan tasks list expands to; mult is how many copies of it its
// parents make. It records in worst the expansion site that makes the most.
func countExpansion(list []*taskfile.Task, mult int64, worst *expansionSite) int64 {
	var total int64
	for _, t := range list {
		n := copyCount(t)
		children := countExpansion(t.Parallel, satMul(mult, n), worst)
		children = satAdd(children, countExpansion(t.Steps, satMul(mult, n), worst))
		sub := satMul(n, satAdd(1, children))
		if n > 1 && satMul(mult, sub) > worst.count {
			*worst = expansionSite{t, satMul(mult, sub)}
		}
		total = satAdd(total, sub)
	}
	return total
}

// copyCount is how many copies for-each or matrix make of t (1 without either).
func copyCount(t *taskfile.Task) int64 {
	switch {
	case len(t.ForEach) > 0:
		return int64(len(t.ForEach))
	case len(t.Matrix) > 0 || len(t.Sample) > 0:
		n := int64(1)
		for _, a := range t.Matrix {
			n = satMul(n, int64(len(a.Values)))
		}
		if len(t.Sample) > 0 {
			n = satMul(n, int64(t.Trials))
		}
		return n
	case t.Search != nil:
		return int64(max(t.Trials, 1))
	}
	return 1
}

// describeCopies says how a task's copies multiply: "100 values" or "100 × 100 × 100 values".
func describeCopies(t *taskfile.Task) string {
	if len(t.ForEach) > 0 {
		return strconv.Itoa(len(t.ForEach)) + " values"
	}
	if len(t.Matrix) == 0 {
		return strconv.Itoa(t.Trials) + " trials"
	}
	sizes := make([]string, len(t.Matrix))
	for i, a := range t.Matrix {
		sizes[i] = strconv.Itoa(len(a.Values))
	}
	s := fmt.Sprintf("%d keys of %s values", len(t.Matrix), strings.Join(sizes, " × "))
	if len(t.Sample) > 0 {
		s += fmt.Sprintf(", each with %d sampled trials,", t.Trials)
	}
	return s
}

func countText(n int64) string {
	if n >= countLimit {
		return "more than 10^18"
	}
	return strconv.FormatInt(n, 10)
}

// nodeBudget is how many YAML nodes, aliases followed, a file allowed maxTasks may hold.
func nodeBudget(maxTasks int) int64 {
	return max(minNodeBudget, satMul(int64(maxTasks), nodesPerTask))
}

// expandedSize counts the nodes of the tree under n as the decoder will see them: every
// alias counts its anchor's whole tree again. It stops counting past budget.
func expandedSize(n *yaml.Node, budget int64) int64 {
	memo := map[*yaml.Node]int64{}
	var size func(*yaml.Node, int) int64
	size = func(n *yaml.Node, depth int) int64 {
		if s, ok := memo[n]; ok {
			return s
		}
		if depth > 10_000 { // an alias cycle (the parser rejects them) or absurd nesting
			return budget + 1
		}
		memo[n] = budget + 1 // while n is counted, a path back to it is a cycle
		s := int64(1)
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s = satAdd(s, size(n.Alias, depth+1))
		}
		for _, c := range n.Content {
			if s > budget {
				break
			}
			s = satAdd(s, size(c, depth+1))
		}
		memo[n] = s
		return s
	}
	return size(n, 0)
}

// peekMaxTasks reads config: max-tasks from the tree before it is decoded, for the node
// budget; the decoder checks the value properly later.
func peekMaxTasks(root *yaml.Node) int {
	root = taskfile.ResolveAlias(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return taskfile.DefaultMaxTasks
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "config" {
			continue
		}
		cfg := taskfile.ResolveAlias(root.Content[i+1])
		for j := 0; cfg != nil && cfg.Kind == yaml.MappingNode && j+1 < len(cfg.Content); j += 2 {
			if cfg.Content[j].Value == "max-tasks" {
				if v, err := strconv.Atoi(cfg.Content[j+1].Value); err == nil && v > 0 {
					return v
				}
			}
		}
	}
	return taskfile.DefaultMaxTasks
}
