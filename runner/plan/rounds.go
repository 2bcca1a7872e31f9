package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"gopkg.in/yaml.v3"
)

// checkExplore reports, at the block's early-stop, a rule that pauses over a search: trial
// (rounds need every trial before the run), and under pbt, trials with nothing to explore
// (no matrix or sample key) and explore: names that are none of its keys.
func (src *sources) checkExplore(b *Task, at *yaml.Node) {
	if b.EarlyStop == nil || !b.EarlyStop.Pauses() {
		return
	}
	for _, t := range b.Parallel {
		if t.Search != nil {
			src.problemNear(at, b, fmt.Sprintf("early-stop: %s runs a block's trials in rounds, which needs them all before the run, and trial %q (at %s) has search:, whose trials are made as its sampler is asked: use sample: or matrix:, or asha or median", b.EarlyStop.Method, t.Name, t.Pos))
			return
		}
	}
	if b.EarlyStop.Method != earlystop.PBT {
		return
	}
	keys := map[string]bool{}
	for _, t := range b.Parallel {
		if t.Space == nil {
			src.problemNear(at, b, fmt.Sprintf("early-stop: pbt explores the values of its trials' matrix or sample keys, and trial %q has none (at %s): give it a matrix or sample: of the values to explore", t.Name, t.Pos))
			return
		}
		for _, a := range t.Space.Axes {
			keys[a.Name()] = true
		}
	}
	for _, name := range b.EarlyStop.Population.Explore {
		if !keys[name] {
			src.problemNear(at, b, fmt.Sprintf("early-stop: explore: %q is not a matrix or sample key of the block's trials (they have %s)", name, strings.Join(slices.Sorted(maps.Keys(keys)), ", ")))
		}
	}
}

// problemNear is a problem at a block's early-stop key, or at the block when config sets it.
func (src *sources) problemNear(at *yaml.Node, b *Task, msg string) {
	pos := b.Pos
	if at != nil {
		pos = src.pos(at)
	}
	src.problems = append(src.problems, Problem{Pos: pos, Msg: msg})
}
