package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// running is sweep's run caught while it goes on: no finish time, the first trials ended,
// two running (one with its curve so far), two waiting, one paused.
func running() Input {
	in := sweep(8, 2, 5)
	r := in.Run
	r.Status, r.FinishedAt = results.StatusRunning, time.Time{}
	for i := 5; i < len(r.Tasks); i++ {
		t := &r.Tasks[i]
		t.FinishedAt = time.Time{}
		switch i {
		case 5, 6:
			t.Status = results.StatusRunning
			if i == 6 {
				t.Progress = &results.Progress{Iter: 120, Of: 400, Rate: 4.2, Unit: "it", Label: "Epoch 1", Source: "bar", ETASeconds: 66.7}
			}
			t.MetricSeries["val_accuracy"] = t.MetricSeries["val_accuracy"][:2]
			t.Metrics["val_accuracy"] = t.MetricSeries["val_accuracy"][1]
		case 7:
			t.Status, t.StartedAt, t.Reason = results.StatusPending, time.Time{}, "no GPU has 7 GiB free"
			t.Metrics, t.MetricSeries, t.Devices = nil, nil, nil
		case 8:
			t.Status = results.StatusPaused
		}
	}
	r.SetBest()
	in.Now = r.Tasks[6].StartedAt.Add(4 * time.Second)
	return in
}

// TestServedPageIsTheWrittenPage: the page a server sends and the one written to disk are
// the same bytes but for the version the served one carries, which starts its following.
func TestServedPageIsTheWrittenPage(t *testing.T) {
	in := sweep(6, 2, 4)
	written := write(t, in)
	in.Version = 42
	served := write(t, in)
	if !bytes.Contains(served, []byte(`<html lang="en" data-live="42">`)) {
		t.Fatalf("the served page does not carry its version")
	}
	if got := bytes.Replace(served, []byte(` data-live="42"`), nil, 1); !bytes.Equal(got, written) {
		t.Errorf("the served page differs from the written one beyond its version")
	}
	if !bytes.Contains(written, []byte(`<html lang="en">`)) {
		t.Errorf("a written page follows a run")
	}
}

// TestRunningPage: a page of a running run says how far it is (running for, the ETA, the
// best so far), what each trial does (running, waiting and why), draws the running trials'
// bars to now and their curves so far, with every status drawn in the timeline's legend.
func TestRunningPage(t *testing.T) {
	in := running()
	page := string(write(t, in))
	parse(t, []byte(page))
	for _, want := range []string{
		"running for ", "ETA about ", "best so far: <strong>",
		`<span class="st running">running</span>`, `<span class="st other">waiting</span><br/><span class="why">no GPU has 7 GiB free</span>`,
		`<span class="key running"></span>running`, `<span class="key paused"></span>paused at a checkpoint`,
		"1 waiting", "2 running", "1 paused",
		// A running trial's progress, as its output said it: its bar's label, n/total, rate, ETA.
		`<span class="st running">running</span><br/><span class="why">Epoch 1: 120/400 it · 4.2 it/s · 1m07s left</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not hold %q", want)
		}
	}
	bar := regexp.MustCompile(`<rect class="bar running" data-task="7" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`).FindStringSubmatch(page)
	if bar == nil {
		t.Fatalf("no bar for the running trial 7")
	}
	if !strings.Contains(page, fmt.Sprintf(`data-v="%.3f">4.0s</td>`, 4.0)) {
		t.Errorf("the running trial's time is not how long it has run so far (4.0s)")
	}
}

// TestLegendExplainsEveryBar: pruned and paused bars are in the legend (grey and violet
// bars were unexplained); a status no bar has is not.
func TestLegendExplainsEveryBar(t *testing.T) {
	in := sweep(4, 1, 3)
	in.Run.Tasks[1].Status = results.StatusPruned
	in.Run.Tasks[2].Status = results.StatusPaused
	page := string(write(t, in))
	for _, want := range []string{`<span class="key pruned"></span>pruned by early stopping`, `<span class="key paused"></span>paused at a checkpoint`, `<span class="key ok"></span>ok`} {
		if !strings.Contains(page, want) {
			t.Errorf("the legend does not hold %q", want)
		}
	}
	if strings.Contains(page, `<span class="key ignored">`) {
		t.Errorf("the legend names a status no bar has")
	}
}

// TestBestTrialsPeakMemory: the best trial's peak memory is in the heading beside its
// value, and in its row; a trial that ran on no GPU shows its host memory's peak.
func TestBestTrialsPeakMemory(t *testing.T) {
	in := sweep(3, 1, 3)
	page := string(write(t, in))
	if !strings.Contains(page, "(val_accuracy 0.03, peak 6.0 GiB)") {
		t.Errorf("the heading does not give the best trial's peak memory")
	}
	if got := peakText(results.Task{PeakHostMemory: 3 << 30}); got != "3.0 GiB host" {
		t.Errorf("a host trial's peak: %q", got)
	}
	if got := peakText(results.Task{PeakGPUMemory: 3 << 30, PeakGPUMemorySource: "device"}); got != "~3.0 GiB" {
		t.Errorf("an estimated peak: %q", got)
	}
}

// TestOneValueIsAPoint: a trial pruned at its first epoch (one value, no series) is drawn
// as a point, and the note counts lines and points apart.
func TestOneValueIsAPoint(t *testing.T) {
	in := sweep(4, 1, 3)
	tr := &in.Run.Tasks[2]
	tr.Status, tr.Reason = results.StatusPruned, "stopped: asha: val_accuracy low at step 1"
	tr.MetricSeries = nil
	page := string(write(t, in))
	if !strings.Contains(page, fmt.Sprintf(`<circle class="curve pruned one" data-task="%d"`, tr.ID)) {
		t.Errorf("the trial pruned at its first epoch is not a point")
	}
	if !strings.Contains(page, "One line per trial that reported it more than once (3), a point at epoch 1 for each that reported it once (1") {
		t.Errorf("the note does not count lines and points apart")
	}
}

// TestLogScale: a hyperparameter sampled log-uniformly is drawn on a log axis however
// narrow its range; one sampled uniformly over less than two decades is not.
func TestLogScale(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  []string
		want bool
	}{{"loguniform", []string{"lr"}, true}, {"uniform", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			in := sweep(7, 1, 2)
			in.Run.LogParams = tc.log
			page := string(write(t, in))
			// lr runs 1..7; on a log axis 2 sits left of the middle of 1 and 7 (at 36% of the
			// way), on a linear one at a sixth.
			m := regexp.MustCompile(`<svg class="scatter" data-param="lr"[^>]*>`).FindStringIndex(page)
			if m == nil {
				t.Fatal("no scatter plot of lr")
			}
			xs := regexp.MustCompile(`cx="([0-9.]+)"[^>]*><title>[^:]*: lr=(1|2|7),`).FindAllStringSubmatch(page[m[1]:], -1)
			at := map[string]float64{}
			for _, x := range xs {
				var v float64
				fmt.Sscan(x[1], &v)
				at[x[2]] = v
			}
			frac := (at["2"] - at["1"]) / (at["7"] - at["1"])
			if got := frac > 0.3; got != tc.want {
				t.Errorf("2 sits at %.2f of the way from 1 to 7: log axis %v, want %v", frac, got, tc.want)
			}
		})
	}
}

// TestLightWithAThousandTrials: 1000 trials of 1000 points each draw about curveBudget
// points in all (not a million), and the table pages.
func TestLightWithAThousandTrials(t *testing.T) {
	in := sweep(1000, 8, 100)
	for i := range in.Run.Tasks {
		if s := in.Run.Tasks[i].MetricSeries["val_accuracy"]; len(s) > 0 {
			long := make([]float64, 0, 1000)
			for range 10 {
				long = append(long, s...)
			}
			in.Run.Tasks[i].MetricSeries["val_accuracy"] = long
		}
	}
	page := string(write(t, in))
	drawn := 0
	for _, pts := range regexp.MustCompile(`<polyline class="curve[^"]*" data-task="\d+" points="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		drawn += len(strings.Fields(pts[1]))
	}
	if drawn > curveBudget*11/10 {
		t.Errorf("1000 curves of 1000 points are drawn from %d points, want about %d", drawn, curveBudget)
	}
	if !strings.Contains(page, `<p class="pager" hidden=""></p>`) || !strings.Contains(page, "100 rows a page.") {
		t.Errorf("the table of 1000 trials does not page")
	}
	if got := thinCurve(1000, 200, func(i int) float64 { return float64(i % 37) }); got[0] != 0 || got[len(got)-1] != 999 || len(got) > 202 {
		t.Errorf("thinCurve keeps %d points from %d to %d", len(got), got[0], got[len(got)-1])
	}
}

// TestRelativeLinks: the page links each trial's log beside it (a relative link, which
// survives a port-forward or a proxy's prefix), and its script asks the server for
// relative URLs only.
func TestRelativeLinks(t *testing.T) {
	in := sweep(2, 1, 2)
	in.Run.LogDir = "/logs/r1"
	in.Run.Tasks[1].LogFile = "/logs/r1/002-train lr=0.log"
	in.Run.Tasks[2].LogFile = "/elsewhere/003.log"
	page := string(write(t, in))
	if !strings.Contains(page, `<a class="log" href="002-train%20lr=0.log" data-task="2">log</a>`) {
		t.Errorf("no relative link to the trial's log")
	}
	if strings.Contains(page, "003.log") {
		t.Errorf("a log outside the run's directory is linked")
	}
	for _, u := range regexp.MustCompile(`(?:fetch|EventSource)\("([^"]*)"`).FindAllStringSubmatch(script, -1) {
		if strings.HasPrefix(u[1], "/") || strings.Contains(u[1], ":") {
			t.Errorf("the script asks for %q: not relative", u[1])
		}
	}
}

// TestContainerMemory: the container's memory is drawn under the tasks on no GPU, and said
// in the legend; in a report merged from several runs (Pods), whose containers one row
// cannot tell apart, it is left out.
func TestContainerMemory(t *testing.T) {
	in := sweep(4, 2, 3)
	s := in.Samples[0]
	s.Devices = append(s.Devices, results.SampleDevice{UUID: results.ContainerDevice, Name: "container", Total: 64 << 30})
	for i := range s.Samples {
		s.Samples[i].Used[results.ContainerDevice] = uint64(i+1) << 30
	}
	page := string(write(t, in))
	row := regexp.MustCompile(`(?s)<g class="cpu-row" data-gpu="">.*?</g>`).FindString(page)
	if !strings.Contains(row, ">container</text>") || !strings.Contains(row, `<path class="mem"`) || !strings.Contains(row, "/ 64.0 GiB</text>") {
		t.Errorf("the container's row has no memory strip:\n%s", row)
	}
	if !strings.Contains(page, "under the container's, the container's memory") {
		t.Errorf("the legend does not say what the container's strip is")
	}
	in.Samples = append(in.Samples, &results.GPUSamples{Devices: []results.SampleDevice{{UUID: results.ContainerDevice, Total: 8 << 30}}})
	if page := string(write(t, in)); strings.Contains(page, ">container</text>") {
		t.Errorf("a merged report draws one container for several")
	}
}
