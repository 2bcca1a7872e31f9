package main_test

import (
	"strings"
	"testing"
)

// TestOnOOMHalves (issue 45, point 3): a trial out of GPU memory where no GPU could hold
// it goes again with its on-oom param halved, 112 → 56, and finishes: its params the
// values it ended with, its initial_params those it started with, each attempt with its
// value and the failed one classed oom. One whose min allows no halving fails as oom.
func TestOnOOMHalves(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("onoom.yml", "16GiB")
	r.wantCode(t, 1)
	var res struct {
		Tasks []struct {
			Name          string            `json:"name"`
			Status        string            `json:"status"`
			Reason        string            `json:"reason"`
			Params        map[string]string `json:"params"`
			InitialParams map[string]string `json:"initial_params"`
			AttemptList   []struct {
				Class  string            `json:"class"`
				Params map[string]string `json:"params"`
			} `json:"attempt_list"`
		} `json:"tasks"`
	}
	e.readJSON("results.json", &res)
	if len(res.Tasks) != 2 {
		t.Fatalf("%d tasks in the results, want 2\n%v", len(res.Tasks), r)
	}
	fit, never := res.Tasks[0], res.Tasks[1]
	if fit.Name != "fit 112" || fit.Status != "ok" || fit.Params["batch"] != "56" || fit.InitialParams["batch"] != "112" {
		t.Errorf("fit: %s %s (%s), params %v, initial %v; want fit 112 ok with batch 56, started at 112\n%v",
			fit.Name, fit.Status, fit.Reason, fit.Params, fit.InitialParams, r)
	}
	if a := fit.AttemptList; len(a) != 2 || a[0].Class != "oom" || a[0].Params["batch"] != "112" || a[1].Class != "" || a[1].Params["batch"] != "56" {
		t.Errorf("fit's attempts: %+v, want oom at 112, then ok at 56", a)
	}
	if !strings.Contains(r.stdout, "out of GPU memory with batch=112; on-oom: requeued with batch=56 (halving 1 of 3)") {
		t.Errorf("want the halving said\n%v", r)
	}
	if never.Status != "failed" || len(never.AttemptList) != 1 || never.AttemptList[0].Class != "oom" ||
		!strings.Contains(never.Reason, "on-oom: batch=112 cannot be halved again (min 100, times 3)") {
		t.Errorf("never: %s (%s), attempts %+v; want failed as oom, saying on-oom cannot halve it", never.Status, never.Reason, never.AttemptList)
	}
}

// TestOnOOMDropsCheckpoint: a halved trial's kept checkpoint was made with the other value:
// it is dropped and its directory emptied before the retry, unless keep-checkpoint: true.
func TestOnOOMDropsCheckpoint(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.env = append(e.env, "CKPT_ROOT="+e.path("ckpt"))
	r := e.runGPUFile("onoom-ckpt.yml", "16GiB")
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, "[drop 112] found a checkpoint") {
		t.Errorf("drop's retry found its checkpoint, want it emptied\n%v", r)
	}
	if !strings.Contains(r.stdout, "[keep 112] found a checkpoint saved by batch 112") {
		t.Errorf("keep's retry did not find its checkpoint, want it kept\n%v", r)
	}
}

// TestOnOOMHalvesSearchTrial: a search: trial is halved as the others are (its sampler's
// param, 112 → 56) and finishes; its sampler is told fail, once, as it did not propose 56.
func TestOnOOMHalvesSearchTrial(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("onoom-search.yml", "16GiB")
	r.wantCode(t, 0)
	var res gpuResults
	e.readJSON("results.json", &res)
	if len(res.Tasks) != 1 || res.Tasks[0].Status != "ok" {
		t.Fatalf("tasks %+v, want the one trial ok\n%v", res.Tasks, r)
	}
	if !strings.Contains(r.stdout, "out of GPU memory with batch=112; on-oom: requeued with batch=56 (halving 1 of 3)") {
		t.Errorf("want the halving said\n%v", r)
	}
	if told := strings.TrimSpace(e.read("told")); told != "0 none fail" {
		t.Errorf("the sampler was told %q, want once: 0 none fail\n%v", told, r)
	}
}
