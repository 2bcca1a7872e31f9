package main_test

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/internal/citest"
)

// objectivesOutcome is the part of results.json about several objectives.
type objectivesOutcome struct {
	Objective  map[string]string   `json:"objective"`
	Objectives []map[string]string `json:"objectives"`
	Best       string              `json:"best"`
	Importance map[string]struct {
		Trials int    `json:"trials"`
		Note   string `json:"note"`
		Params []struct {
			Name       string  `json:"name"`
			Importance float64 `json:"importance"`
		} `json:"params"`
	} `json:"importance"`
	Tasks []struct {
		Name       string             `json:"name"`
		Status     string             `json:"status"`
		Params     map[string]string  `json:"params"`
		Metrics    map[string]float64 `json:"metrics"`
		ParetoRank int                `json:"pareto_rank"`
	} `json:"tasks"`
}

// TestOptunaTwoObjectives: Optuna's own CLI asks with two directions and is told both values
// (RUNALL_OBJECTIVE_VALUES, tell --values a b); results.json keeps the first objective as
// objective with its best, lists both, gives each trial its Pareto front (checked here
// against the definition) and each objective its importances; the summary shows the fronts
// and the importances.
func TestOptunaTwoObjectives(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("optuna"); err != nil {
		citest.Unavailable(t, "optuna not found: install python3-optuna")
	}
	e := newE2E(t)
	r := e.runFile("adapt/optuna-multi.yml", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	var res objectivesOutcome
	if err := json.Unmarshal([]byte(e.read("results.json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Objective["metric"] != "score" || len(res.Objectives) != 2 || res.Objectives[1]["metric"] != "cost" || res.Objectives[1]["mode"] != "min" {
		t.Fatalf("objective %v, objectives %v", res.Objective, res.Objectives)
	}
	if len(res.Tasks) != 12 {
		t.Fatalf("%d trials, want 12\n%v", len(res.Tasks), r)
	}
	// By the definition: front 1 holds the trials no other beats (score as high, cost as low,
	// one of them strictly); a trial's front is one past the furthest front of those that beat it.
	beats := func(a, b int) bool {
		ma, mb := res.Tasks[a].Metrics, res.Tasks[b].Metrics
		return ma["score"] >= mb["score"] && ma["cost"] <= mb["cost"] && (ma["score"] > mb["score"] || ma["cost"] < mb["cost"])
	}
	var front func(i int) int
	front = func(i int) int {
		f := 1
		for j := range res.Tasks {
			if beats(j, i) {
				f = max(f, front(j)+1)
			}
		}
		return f
	}
	read := map[string][2]float64{}
	firsts := 0
	for i, tr := range res.Tasks {
		if want := front(i); tr.Status != "ok" || tr.ParetoRank != want {
			t.Errorf("%s: %s, front %d, want %d", tr.Name, tr.Status, tr.ParetoRank, want)
		}
		if tr.ParetoRank == 1 {
			firsts++
		}
		read[tr.Params["x"]+" "+tr.Params["y"]] = [2]float64{tr.Metrics["score"], tr.Metrics["cost"]}
	}
	for _, m := range []string{"score", "cost"} {
		if imp := res.Importance[m]; imp.Trials != 12 || len(imp.Params) != 2 {
			t.Errorf("importance for %s: %+v", m, imp)
		}
	}
	py := exec.Command("/usr/bin/python3", "-c", studyScript)
	py.Dir = e.dir
	out, err := py.Output()
	if err != nil {
		t.Fatalf("reading the study: %v", err)
	}
	told := 0
	for _, l := range lines(string(out)) {
		var st studyTrial
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		v, ok := read[f(st.Params["x"])+" "+f(st.Params["y"])]
		if st.State != "COMPLETE" || !ok || len(st.Values) != 2 || st.Values[0] != v[0] || st.Values[1] != v[1] {
			t.Errorf("trial %d: %s %v values %v; runall read %v (%v)\n%v", st.Number, st.State, st.Params, st.Values, v, ok, r)
		}
		told++
	}
	if told != 12 {
		t.Errorf("the study holds %d trials, want 12:\n%s", told, out)
	}
	if !strings.Contains(r.stdout, "FRONT") || strings.Count(r.stdout, "1 (first)") != firsts ||
		!strings.Contains(r.stdout, "Importance for score (PED-ANOVA, top 10% of 12 trials): ") ||
		!strings.Contains(r.stdout, "Importance for cost (PED-ANOVA, top 10% of 12 trials): ") {
		t.Errorf("summary: want FRONT with %d first, and both importances:\n%s", firsts, r.stdout)
	}
}
