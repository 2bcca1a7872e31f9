package results

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Merge makes one run of the results of several: the shards of an Indexed Job, each of
// which ran its share of the trials (and every setup step). A task recorded by more than
// one (a setup step, or a shard that ran twice) is taken from the one that ran it, the
// latest. Tasks are in plan order. The merged run is assessed anew (Run.Assess).
func Merge(runs []*Run) *Run {
	if len(runs) == 0 {
		return &Run{Status: StatusOK}
	}
	if len(runs) == 1 {
		runs[0].Assess() // a results file written before Assess, or a claims sweep's one record
		return runs[0]
	}
	out := &Run{Schema: Schema, File: runs[0].File, Status: StatusOK, LearnedGPUMemory: map[string]uint64{}}
	var ids, shards []string
	// A task is known by its ID and name together: the same in every shard of one file, and
	// apart for two trials that share a name.
	type taskID struct {
		id   int
		name string
	}
	byID := map[taskID]Task{}
	for _, r := range runs {
		ids = append(ids, r.RunID)
		if r.Shard != "" {
			shards = append(shards, r.Shard)
		}
		if r.Status != StatusOK {
			out.Status = r.Status
		}
		if out.StartedAt.IsZero() || r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = r.FinishedAt
		}
		out.Objective = cmp.Or(out.Objective, r.Objective)
		out.Objectives = firstObjectives(out.Objectives, r.Objectives)
		out.Stopped = cmp.Or(out.Stopped, r.Stopped)
		out.GPUProcessIDs = cmp.Or(out.GPUProcessIDs, r.GPUProcessIDs)
		maps.Copy(out.LearnedGPUMemory, r.LearnedGPUMemory)
		out.LogParams = append(out.LogParams, r.LogParams...)
		for _, t := range r.Tasks {
			k := taskID{t.ID, t.Name}
			if old, ok := byID[k]; !ok || preferred(t, old) {
				byID[k] = t
			}
		}
	}
	slices.Sort(ids)
	slices.Sort(shards)
	out.RunID = strings.Join(slices.Compact(ids), ",")
	out.Shard = strings.Join(slices.Compact(shards), ",")
	slices.Sort(out.LogParams)
	out.LogParams = slices.Compact(out.LogParams)
	if len(out.LearnedGPUMemory) == 0 {
		out.LearnedGPUMemory = nil
	}
	out.Tasks = slices.SortedFunc(maps.Values(byID), func(a, b Task) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), strings.Compare(a.Name, b.Name))
	})
	out.Assess() // the whole sweep's fronts and importances, not any shard's
	return out
}

// preferred reports whether a is a better record of a task than b: one that ran over one
// that did not, then the later.
func preferred(a, b Task) bool {
	ranA, ranB := a.Status != StatusSkipped && a.Status != StatusPending, b.Status != StatusSkipped && b.Status != StatusPending
	if ranA != ranB {
		return ranA
	}
	return a.FinishedAt.After(b.FinishedAt)
}

// firstObjectives is a where it lists objectives, else b: the first shard's that lists them.
func firstObjectives(a, b []Objective) []Objective {
	if len(a) > 0 {
		return a
	}
	return b
}
