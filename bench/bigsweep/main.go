// Command bigsweep writes the results.json of a synthetic sweep for the page's scale
// benchmark (docs/benchmarks.md, the report at scale): n trials of e epochs with 8
// parameters (two sampled log-uniformly, one a choice), one objective, a tenth of the
// trials pruned early and a few paused, with its importance assessed as runall does.
//
//	go run ./bench/bigsweep -trials 10000 -epochs 100 -o results.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/runall/runall/runner/results"
)

func main() {
	n := flag.Int("trials", 10000, "trials")
	epochs := flag.Int("epochs", 100, "epochs a trial")
	out := flag.String("o", "results.json", "where to write")
	flag.Parse()
	b, err := sweep(*n, *epochs)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigsweep:", err)
		os.Exit(1)
	}
}

func sweep(n, epochs int) ([]byte, error) {
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	run := &results.Run{File: "sweep.yml", RunID: "big", Status: results.StatusOK, StartedAt: t0,
		Objective: &results.Objective{Metric: "val_accuracy", Mode: "max"}, LogParams: []string{"lr", "wd"}}
	for i := range n {
		lr, wd := math.Pow(10, -5+4*rng.Float64()), math.Pow(10, -6+3*rng.Float64())
		bs := []int{16, 32, 64, 128, 256}[rng.IntN(5)]
		opt := []string{"sgd", "adam", "adamw"}[rng.IntN(3)]
		drop, mom, warm, layers := rng.Float64()/2, 0.8+rng.Float64()/5, rng.IntN(10), 2+rng.IntN(6)
		top := 0.95 - 0.1*math.Abs(math.Log10(lr)+3) - float64(bs)/5000 - drop/10 + map[string]float64{"sgd": 0, "adam": 0.02, "adamw": 0.03}[opt]
		status, e := results.StatusOK, epochs
		switch {
		case i%10 == 7:
			status, e = results.StatusPruned, 1+rng.IntN(epochs/4)
		case i%97 == 5:
			status, e = results.StatusPaused, epochs/2
		}
		acc := make([]float64, e)
		for j := range acc {
			acc[j] = top*(1-math.Exp(-float64(j+1)/10)) + rng.NormFloat64()*0.005
		}
		start := t0.Add(time.Duration(i) * time.Second)
		t := results.Task{ID: i + 1, Name: fmt.Sprintf("trial %d", i), Cmd: "python train.py", Status: status, Attempts: 1,
			StartedAt: start, FinishedAt: start.Add(time.Duration(e) * time.Second),
			Params: map[string]string{"lr": fmt.Sprintf("%.3g", lr), "wd": fmt.Sprintf("%.3g", wd), "bs": strconv.Itoa(bs),
				"opt": opt, "dropout": fmt.Sprintf("%.3f", drop), "momentum": fmt.Sprintf("%.3f", mom),
				"warmup": strconv.Itoa(warm), "layers": strconv.Itoa(layers)},
			Metrics:      map[string]float64{"val_accuracy": acc[e-1]},
			MetricSeries: map[string][]float64{"val_accuracy": acc},
		}
		if status == results.StatusPruned {
			t.Reason = "stopped: asha: below the rung's quantile"
		}
		run.Tasks = append(run.Tasks, t)
		run.FinishedAt = t.FinishedAt
	}
	run.Assess()
	return json.MarshalIndent(run, "", " ")
}
