package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestObjectiveRank(t *testing.T) {
	tasks := []Task{
		{Name: "setup", Status: StatusOK},
		{Name: "a", Status: StatusOK, Metrics: map[string]float64{"acc": 0.7}},
		{Name: "b", Status: StatusFailed, Metrics: map[string]float64{"acc": 0.99}},
		{Name: "c", Status: StatusOK, Metrics: map[string]float64{"acc": 0.9}},
		{Name: "d", Status: StatusSkipped},
		{Name: "e", Status: StatusOK, Metrics: map[string]float64{"acc": 0.8}},
	}
	names := func(o *Objective) []string {
		var out []string
		for _, i := range o.Rank(tasks) {
			out = append(out, tasks[i].Name)
		}
		return out
	}
	maxObj, minObj := &Objective{Metric: "acc", Mode: "max"}, &Objective{Metric: "acc", Mode: "min"}
	if got, want := names(maxObj), []string{"c", "e", "a", "b", "setup", "d"}; !slices.Equal(got, want) {
		t.Errorf("max: %v, want %v", got, want)
	}
	if got, want := names(minObj), []string{"a", "e", "c", "b", "setup", "d"}; !slices.Equal(got, want) {
		t.Errorf("min: %v, want %v", got, want)
	}
	if got := names(nil); !slices.Equal(got, []string{"setup", "a", "b", "c", "d", "e"}) {
		t.Errorf("no objective: %v", got)
	}
	best := func(o *Objective, tasks []Task) string {
		t, _ := o.BestTask(tasks)
		return t.Name
	}
	if best(maxObj, tasks) != "c" || best(minObj, tasks) != "a" || best(nil, tasks) != "" {
		t.Errorf("best: %q %q", best(maxObj, tasks), best(minObj, tasks))
	}
	if got := best(maxObj, tasks[2:3]); got != "" {
		t.Errorf("best of a failed trial alone: %q, want none", got)
	}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := &Objective{Metric: "acc", Mode: "max"}
	shard0 := &Run{File: "tasks.yml", RunID: "r0", Shard: "0/2", Status: StatusOK, StartedAt: t0, FinishedAt: t0.Add(time.Minute), Objective: obj,
		Tasks: []Task{{ID: 1, Name: "setup", Status: StatusOK, FinishedAt: t0.Add(time.Second)},
			{ID: 3, Name: "t0", Status: StatusOK, Metrics: map[string]float64{"acc": 0.5}}}}
	shard1 := &Run{File: "tasks.yml", RunID: "r1", Shard: "1/2", Status: StatusFailed, StartedAt: t0.Add(-time.Second), FinishedAt: t0.Add(2 * time.Minute), Objective: obj,
		Tasks: []Task{{ID: 1, Name: "setup", Status: StatusOK, FinishedAt: t0.Add(2 * time.Second)},
			{ID: 4, Name: "t1", Status: StatusOK, Metrics: map[string]float64{"acc": 0.8}},
			{ID: 5, Name: "t2", Status: StatusFailed}}}
	m := Merge([]*Run{shard1, shard0})
	var names []string
	for _, tk := range m.Tasks {
		names = append(names, tk.Name)
	}
	if !slices.Equal(names, []string{"setup", "t0", "t1", "t2"}) {
		t.Errorf("tasks %v", names)
	}
	if m.Tasks[0].FinishedAt != t0.Add(2*time.Second) {
		t.Errorf("setup from the later shard: %v", m.Tasks[0].FinishedAt)
	}
	if m.Status != StatusFailed || m.Best != "t1" || m.RunID != "r0,r1" || m.Shard != "0/2,1/2" ||
		!m.StartedAt.Equal(t0.Add(-time.Second)) || !m.FinishedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("merged %+v", m)
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewSampleWriter(&b)
	devs := []SampleDevice{{UUID: "GPU-a", Total: 32 << 30}, {UUID: "GPU-b", Total: 32 << 30}}
	t0 := time.UnixMilli(1_700_000_000_000)
	w.Add(t0, devs, []uint64{0, 0})
	w.Add(t0.Add(250*time.Millisecond), devs, []uint64{1 << 20, 0}) // moved too little: left out
	w.Add(t0.Add(500*time.Millisecond), devs, []uint64{1 << 30, 0}) // kept
	w.Add(t0.Add(550*time.Millisecond), devs, []uint64{2 << 30, 0}) // too soon: left out
	w.Add(t0.Add(6*time.Second), devs, []uint64{1 << 30, 0})        // SampleEvery: kept
	w.Add(t0.Add(7*time.Second), devs[:1], []uint64{5 << 30})       // devices changed: kept
	b.WriteString(`{"t":1700000009000,"us`)                         // a line cut short by a kill
	s, err := ReadSamples(&b)
	if err != nil || w.Err() != nil {
		t.Fatal(err, w.Err())
	}
	var got []uint64
	for _, smp := range s.Samples {
		got = append(got, smp.Used["GPU-a"])
	}
	if !slices.Equal(got, []uint64{0, 1 << 30, 1 << 30, 5 << 30}) || len(s.Devices) != 2 || s.Truncated {
		t.Errorf("samples %v, devices %v", got, s.Devices)
	}
	if _, ok := s.Samples[3].Used["GPU-b"]; ok {
		t.Errorf("the last sample is of GPU-a alone: %v", s.Samples[3].Used)
	}
	if _, err := ReadSamples(strings.NewReader("{bad\n{\"t\":1,\"used\":[1]}\n")); err == nil {
		t.Error("a bad line before others: want an error")
	}
}

func TestSamplesBounded(t *testing.T) {
	var b bytes.Buffer
	w := NewSampleWriter(&b)
	devs := []SampleDevice{{UUID: "GPU-a", Total: 80 << 30}}
	t0 := time.Now()
	for i := range 2_000_000 {
		w.Add(t0.Add(time.Duration(i)*time.Second), devs, []uint64{uint64(i%2) << 30})
		if b.Len() >= SampleLimit {
			break
		}
	}
	if b.Len() > SampleLimit {
		t.Errorf("%d bytes, over the %d limit", b.Len(), SampleLimit)
	}
	s, err := ReadSamples(&b)
	if err != nil || !s.Truncated {
		t.Errorf("truncated %v, err %v", s != nil && s.Truncated, err)
	}
}

// TestSampleFeed: a samples file read while it is written, in pieces cut anywhere, is what
// reading it whole gives.
func TestSampleFeed(t *testing.T) {
	file := `{"devices":[{"uuid":"GPU-a","total":100},{"uuid":"GPU-b","total":200}]}
{"t":1000,"used":[1,2]}
{"t":2000,"used":[3,4]}
{"devices":[{"uuid":"GPU-b","total":200}]}
{"t":3000,"used":[5]}
`
	whole, err := ReadSamples(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 7, 30, 64} {
		var f SampleFeed
		for i := 0; i < len(file); i += cut {
			if err := f.Feed([]byte(file[i:min(i+cut, len(file))])); err != nil {
				t.Fatalf("pieces of %d: %v", cut, err)
			}
		}
		if !reflect.DeepEqual(f.Samples(), whole) {
			t.Errorf("pieces of %d: %+v, want %+v", cut, f.Samples(), whole)
		}
	}
	var f SampleFeed
	if err := f.Feed([]byte("{\"t\":1,\"used\":[1]}\nnot json\n{\"t\":2}\n")); err == nil {
		t.Errorf("a bad line is no error")
	}
}

// TestSkippedTaskHasNoExitCode: in results.json a skipped task (and one never started) has
// no exit_code, not -1; read back it is -1 again, and a task that ran keeps its code, 0 too.
func TestSkippedTaskHasNoExitCode(t *testing.T) {
	run := Run{Status: StatusOK, Tasks: []Task{
		{ID: 1, Name: "a", Status: StatusSkipped, ExitCode: -1, Attempts: 1, Reason: "done by another runall"},
		{ID: 2, Name: "b", Status: StatusPending, ExitCode: -1},
		{ID: 3, Name: "c", Status: StatusOK, ExitCode: 0, Attempts: 1},
		{ID: 4, Name: "d", Status: StatusFailed, ExitCode: -1, Signal: "SIGKILL", Attempts: 1},
	}}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ Tasks []map[string]any }
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for i, want := range []any{nil, nil, 0.0, -1.0} {
		if got := raw.Tasks[i]["exit_code"]; got != want {
			t.Errorf("task %d (%s): exit_code %v, want %v", i+1, run.Tasks[i].Status, got, want)
		}
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i, task := range back.Tasks {
		if task.ExitCode != run.Tasks[i].ExitCode || task.Name != run.Tasks[i].Name || task.Attempts != run.Tasks[i].Attempts {
			t.Errorf("task %d read back as %+v, want %+v", i+1, task, run.Tasks[i])
		}
	}
}
