package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// sweep is a run of n trials over gpus devices (and a setup step on none), each trial
// reporting its val_accuracy per epoch and a loss, with samples of each device's memory.
func sweep(n, gpus, epochs int) Input {
	run := &results.Run{File: "tasks.yml", RunID: "r1", Status: results.StatusFailed, StartedAt: t0,
		Objective: &results.Objective{Metric: "val_accuracy", Mode: "max"}}
	run.Tasks = append(run.Tasks, results.Task{ID: 1, Name: "setup", Status: results.StatusOK,
		StartedAt: t0, FinishedAt: t0.Add(time.Second)})
	samples := &results.GPUSamples{}
	for g := range gpus {
		samples.Devices = append(samples.Devices, results.SampleDevice{UUID: fmt.Sprintf("GPU-%d", g), Name: "Tesla V100", Total: 32 << 30})
	}
	for i := range n {
		start := t0.Add(time.Second + time.Duration(i/gpus)*10*time.Second)
		acc := make([]float64, epochs)
		for e := range acc {
			acc[e] = float64(e+1) / float64(epochs) * float64(1+i%97) / 100
		}
		status := results.StatusOK
		if i%10 == 9 {
			status = results.StatusFailed
		}
		run.Tasks = append(run.Tasks, results.Task{
			ID: i + 2, Name: fmt.Sprintf("train lr=%d <&\"x\">", i), Status: status,
			StartedAt: start, FinishedAt: start.Add(9 * time.Second),
			Devices: []string{fmt.Sprintf("GPU-%d", i%gpus)}, GPUMemory: 7 << 30, PeakGPUMemory: 6 << 30,
			Params:       map[string]string{"lr": strconv.Itoa(i%7 + 1), "opt": []string{"sgd", "adam"}[i%2]},
			Metrics:      map[string]float64{"val_accuracy": acc[epochs-1], "loss": 1 - acc[epochs-1]},
			MetricSeries: map[string][]float64{"val_accuracy": acc},
		})
		run.FinishedAt = start.Add(9 * time.Second)
	}
	for s := t0; !s.After(run.FinishedAt); s = s.Add(time.Second) {
		used := map[string]uint64{}
		for _, d := range samples.Devices {
			used[d.UUID] = uint64(s.Sub(t0)/time.Second%10) << 30
		}
		samples.Samples = append(samples.Samples, results.GPUSample{Time: s, Used: used})
	}
	run.SetBest()
	return Input{Run: run, Samples: []*results.GPUSamples{samples}}
}

// element is what the test reads of the page: each element's name, attributes and text.
type element struct {
	name  string
	attrs map[string]string
	text  string // its own character data, and its descendants'
}

// parse reads the page as XML, strictly: the page is well-formed, so any reader of it (a
// browser, an XML tool) reads what was meant.
func parse(t *testing.T, page []byte) []*element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var all, open []*element
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			all, open = append(all, e), append(open, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			for _, e := range open {
				e.text += string(tok)
			}
		}
	}
	if len(open) != 0 {
		t.Fatalf("%d elements left open", len(open))
	}
	return all
}

func write(t *testing.T, in Input) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReport: a well-formed page with one timeline row per GPU (and one for the setup
// step on none), every trial named in the table and on the timeline, the best first.
func TestReport(t *testing.T) {
	in := sweep(12, 3, 5)
	els := parse(t, write(t, in))
	var rows []string
	var tableRows []*element
	bars := map[string]bool{}
	for _, e := range els {
		switch {
		case e.name == "g" && e.attrs["class"] == "gpu-row":
			rows = append(rows, e.attrs["data-gpu"])
		case e.name == "g" && e.attrs["class"] == "cpu-row":
			rows = append(rows, "(none)")
		case e.name == "tr":
			tableRows = append(tableRows, e)
		case e.name == "rect" && strings.HasPrefix(e.attrs["class"], "bar "):
			bars[strings.SplitN(e.text, "\n", 2)[0]] = true
		}
	}
	if head := tableRows[0].text; !strings.Contains(head, "GPU") || !strings.Contains(head, "Peak memory") {
		t.Errorf("the table has no GPU columns: %q", head)
	}
	tableRows = tableRows[1:] // the header
	if want := []string{"GPU-0", "GPU-1", "GPU-2", "(none)"}; !slices.Equal(rows, want) {
		t.Errorf("timeline rows %q, want %q", rows, want)
	}
	if len(tableRows) != len(in.Run.Tasks) {
		t.Fatalf("%d table rows, want %d", len(tableRows), len(in.Run.Tasks))
	}
	for _, task := range in.Run.Tasks {
		if !slices.ContainsFunc(tableRows, func(e *element) bool { return strings.Contains(e.text, task.Name) }) {
			t.Errorf("%q is not in the table", task.Name)
		}
		if !bars[task.Name] {
			t.Errorf("%q has no bar on the timeline", task.Name)
		}
	}
	if first := tableRows[0].text; !strings.Contains(first, in.Run.Best) || !strings.Contains(tableRows[0].attrs["class"], "best") {
		t.Errorf("the first row is %q (class %q), want the best, %q", first, tableRows[0].attrs["class"], in.Run.Best)
	}
	if in.Run.Best != "train lr=11 <&\"x\">" { // 1+i%97 is largest at i=11 (i=9 failed)
		t.Errorf("best %q", in.Run.Best)
	}
}

// TestReportSelfContained: nothing in the page is fetched from anywhere; it links only the
// trials' logs beside it, relatively.
func TestReportSelfContained(t *testing.T) {
	in := sweep(30, 2, 20)
	in.Run.LogDir = "logs/r1"
	for i := range in.Run.Tasks {
		in.Run.Tasks[i].LogFile = fmt.Sprintf("logs/r1/%03d-t.log", i)
	}
	page := write(t, in)
	links := 0
	for _, e := range parse(t, page) {
		if v, ok := e.attrs["href"]; ok && e.name == "a" && !strings.ContainsAny(v, ":/") {
			links++ // a link the user follows, to a file beside the page: it loads nothing
			continue
		}
		for _, a := range []string{"src", "href", "xlink:href", "action", "srcset", "data"} {
			if v, ok := e.attrs[a]; ok && e.name != "g" && e.name != "svg" {
				t.Errorf("<%s %s=%q>: the page must load nothing", e.name, a, v)
			}
		}
	}
	if links != len(in.Run.Tasks) {
		t.Errorf("%d log links, want %d", links, len(in.Run.Tasks))
	}
	for _, re := range []string{`(?i)url\(`, `(?i)@import`, `(?i)<link`, `(?i)https?://`, `(?i)<script[^>]+src`} {
		if m := regexp.MustCompile(re).Find(page); m != nil {
			t.Errorf("the page holds %q", m)
		}
	}
}

// TestReportCharts: a curve per trial that reported a series of the objective, and a
// scatter per hyperparameter; a run with none says so instead of drawing empty charts, and
// one without GPUs has no GPU columns.
func TestReportCharts(t *testing.T) {
	in := sweep(6, 2, 4)
	var curves, scatters int
	for _, e := range parse(t, write(t, in)) {
		switch {
		case e.name == "polyline" && strings.HasPrefix(e.attrs["class"], "curve"):
			curves++
		case e.name == "svg" && e.attrs["class"] == "scatter":
			scatters++
		}
	}
	if curves != 6 || scatters != 2 {
		t.Errorf("%d curves and %d scatter plots, want 6 and 2", curves, scatters)
	}

	bare := &results.Run{Status: results.StatusOK, Tasks: []results.Task{{ID: 1, Name: "only", Status: results.StatusOK}}}
	page := string(write(t, Input{Run: bare}))
	parse(t, []byte(page))
	if !strings.Contains(page, "No task ran long enough to draw.") || strings.Contains(page, "class=\"curve") || strings.Contains(page, "<th>GPU</th>") {
		t.Errorf("a run without times or metrics:\n%s", page)
	}
}

func BenchmarkWrite1000(b *testing.B) {
	in := sweep(1000, 8, 50)
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := Write(&buf, in); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/page")
}
