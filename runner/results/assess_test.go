package results

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// twoObjectives is a sweep of accuracy (max) and latency (min) whose front is known by hand:
// a (0.9, 30) is beaten by e (0.9, 20); c (0.85, 40) by a and e; f (0.6, 50) by c; b, d
// and e are the first front. g failed, h reported no latency: neither has a front.
func twoObjectives() *Run {
	task := func(id int, name string, acc, lat float64) Task {
		return Task{ID: id, Name: name, Status: StatusOK, Params: map[string]string{"lr": strconv.Itoa(id)},
			Metrics: map[string]float64{"acc": acc, "latency": lat}}
	}
	r := &Run{Objective: &Objective{"acc", "max"}, Objectives: []Objective{{"acc", "max"}, {"latency", "min"}}}
	r.Tasks = []Task{task(1, "a", 0.9, 30), task(2, "b", 0.8, 10), task(3, "c", 0.85, 40), task(4, "d", 0.7, 5),
		task(5, "e", 0.9, 20), task(6, "f", 0.6, 50), task(7, "g", 0.99, 1), {ID: 8, Name: "h", Status: StatusOK, Metrics: map[string]float64{"acc": 0.95}}}
	r.Tasks[6].Status = StatusFailed
	return r
}

func fronts(r *Run) map[string]int {
	out := map[string]int{}
	for _, t := range r.Tasks {
		out[t.Name] = t.ParetoRank
	}
	return out
}

func TestAssessParetoRanks(t *testing.T) {
	r := twoObjectives()
	r.Assess()
	want := map[string]int{"a": 2, "b": 1, "c": 3, "d": 1, "e": 1, "f": 4, "g": 0, "h": 0}
	if got := fronts(r); !maps.Equal(got, want) {
		t.Fatalf("fronts %v, want %v", got, want)
	}
	// best by the first objective alone, as today's readers expect: h's 0.95 (no latency)
	if r.Best != "h" || r.BestID != 8 {
		t.Errorf("best %q (%d), want h by acc alone", r.Best, r.BestID)
	}
	var names []string
	for _, i := range r.Order() {
		names = append(names, r.Tasks[i].Name)
	}
	// by front, each best first by acc; then those with none, as Objective.Rank puts them
	if want := []string{"e", "b", "d", "a", "c", "f", "h", "g"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
	b, _ := json.Marshal(r)
	for _, s := range []string{`"objectives":[{"metric":"acc","mode":"max"},{"metric":"latency","mode":"min"}]`, `"objective":{"metric":"acc","mode":"max"}`, `"pareto_rank":1`, `"importance":{"acc":{"method":"ped-anova"`, `"latency":{"method":"ped-anova"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("results.json lacks %s:\n%s", s, b)
		}
	}
}

// One objective: no fronts, and results.json as before but for importance.
func TestAssessOneObjective(t *testing.T) {
	r := twoObjectives()
	r.Objectives = nil
	r.Assess()
	if got := fronts(r); slices.ContainsFunc(r.Tasks, func(t Task) bool { return t.ParetoRank != 0 }) {
		t.Fatalf("fronts with one objective: %v", got)
	}
	if _, ok := r.Importance["acc"]; !ok || len(r.Importance) != 1 {
		t.Fatalf("importance %+v, want acc's", r.Importance)
	}
}

// Merged shards are ranked as one sweep: each shard's own fronts are not kept.
func TestMergeRanksTheWholeSweep(t *testing.T) {
	all := twoObjectives()
	a, b := *all, *all
	a.RunID, b.RunID = "a", "b"
	a.Tasks, b.Tasks = slices.Clone(all.Tasks[:3]), slices.Clone(all.Tasks[3:])
	a.Assess()
	b.Assess()
	if fronts(&a)["a"] != 1 { // e, which beats it, ran in the other shard
		t.Fatalf("shard a: fronts %v", fronts(&a))
	}
	m := Merge([]*Run{&a, &b})
	want := map[string]int{"a": 2, "b": 1, "c": 3, "d": 1, "e": 1, "f": 4, "g": 0, "h": 0}
	if got := fronts(m); !maps.Equal(got, want) {
		t.Fatalf("merged fronts %v, want %v", got, want)
	}
	if len(m.Objectives) != 2 || m.Importance["latency"].Trials != 6 {
		t.Fatalf("merged objectives %v, importance %+v", m.Objectives, m.Importance)
	}
}
