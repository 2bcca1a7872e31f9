package progress

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// recorded is a testdata file's output, its header ("# " lines up to "# ---") left out.
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, out, ok := bytes.Cut(b, []byte("# ---\n"))
	if !ok {
		t.Fatalf("%s: no header ending in \"# ---\"", name)
	}
	return out
}

// segments splits output as runall's pipe reader hands it on: at each newline, and at each
// carriage return within a line (the update of a bar, handed on with its \r).
func segments(out []byte) []string {
	var segs []string
	for line := range strings.SplitSeq(string(out), "\n") {
		parts := strings.SplitAfter(line, "\r")
		for _, p := range parts {
			if p != "" && p != "\r" {
				segs = append(segs, p)
			}
		}
	}
	return segs
}

// feed reads a recorded output a segment every 100 ms and returns the progress after it.
func feed(t *testing.T, name string) (*Reader, Progress) {
	t.Helper()
	r := NewReader()
	for i, s := range segments(recorded(t, name)) {
		if _, err := r.Line(s, t0.Add(time.Duration(i)*100*time.Millisecond)); err != nil {
			t.Fatalf("%s: segment %d %q: %v", name, i, s, err)
		}
	}
	p, ok := r.Progress()
	if !ok {
		t.Fatalf("%s: no progress read", name)
	}
	return r, p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }

func TestRecordedFormats(t *testing.T) {
	for _, c := range []struct {
		file, label, unit string
		n, total, rate    float64 // rate -1: from the timing, checked to be > 0
		source            Source
	}{
		{file: "tqdm-total.txt", n: 40, total: 40, rate: 33.04, unit: "it", source: FromBar},
		{file: "tqdm-nototal.txt", n: 30, rate: 33.07, unit: "it", source: FromBar},
		{file: "tqdm-slow.txt", n: 4, total: 4, rate: 1 / 1.30, unit: "it", source: FromBar},
		{file: "tqdm-scaled.txt", n: 12000, total: 12000, rate: 9930, unit: "it", source: FromBar},
		// The inner bar moves most often; leave=False clears it as each epoch ends.
		{file: "tqdm-nested.txt", label: "batch", n: 8, total: 10, rate: 33.13, unit: "it", source: FromBar},
		// The training bar, not the evaluation's (total 4), nor the log dicts.
		{file: "hf-trainer.txt", n: 20, total: 20, rate: 17.05, unit: "it", source: FromBar},
		{file: "hf-printer.txt", n: 2, rate: -1, unit: "epoch", source: FromHFLog},
		// The training bar of the last epoch, not the sanity check's or validation's.
		{file: "lightning.txt", label: "Epoch 1", n: 10, total: 10, rate: 9.37, unit: "it", source: FromBar},
		// Both epochs' steps: "Epoch 2/2" and 12/12 are 24 of 24.
		{file: "keras3.txt", label: "", n: 24, total: 24, rate: 4, unit: "step", source: FromBar},
		{file: "keras2.txt", label: "", n: 24, total: 24, rate: 4, unit: "step", source: FromBar},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, p := feed(t, c.file)
			if p.N != c.n || p.Total != c.total || p.Label != c.label || p.Unit != c.unit || p.Source != c.source {
				t.Errorf("got n=%v total=%v label=%q unit=%q source=%v, want n=%v total=%v label=%q unit=%q source=%v",
					p.N, p.Total, p.Label, p.Unit, p.Source, c.n, c.total, c.label, c.unit, c.source)
			}
			if c.rate < 0 && !(p.Rate > 0) || c.rate >= 0 && !near(p.Rate, c.rate) {
				t.Errorf("rate %v, want %v", p.Rate, c.rate)
			}
		})
	}
}

// A bar part-way: Keras 2 prints no rate before an epoch's end, so it comes from the timing;
// the steps of the epoch before count.
func TestKerasMidEpoch(t *testing.T) {
	r := NewReader()
	segs := segments(recorded(t, "keras2.txt"))
	at := -1
	for i, s := range segs {
		if strings.Contains(s, " 6/12 [") && i > len(segs)/2 {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no second-epoch 6/12 in keras2.txt")
	}
	now := t0
	for _, s := range segs[:at+1] {
		if strings.Contains(s, "/12 [") {
			now = now.Add(250 * time.Millisecond) // a step each bar drawn; the epoch lines take none
		}
		if _, err := r.Line(s, now); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Progress()
	if p.N != 18 || p.Total != 24 || !near(p.Rate, 4) {
		t.Fatalf("got %v of %v at %v/s, want 18 of 24 at 4/s (a step each 250 ms)", p.N, p.Total, p.Rate)
	}
	if eta, ok := p.ETA(); !ok || eta != 1500*time.Millisecond {
		t.Fatalf("eta %v %v, want 1.5s", eta, ok)
	}
}

func TestRunallProgress(t *testing.T) {
	r := NewReader()
	lines := []struct {
		line string
		at   time.Duration
	}{
		{"runall-progress iter=0 of=100", 0},
		{"runall-progress iter=10 of=100", 2 * time.Second},
		{"runall-progress iter=20 of=100", 4 * time.Second},
	}
	for _, l := range lines {
		if _, err := r.Line(l.line, t0.Add(l.at)); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Progress()
	eta, ok := p.ETA()
	if p.N != 20 || p.Total != 100 || p.Rate != 5 || p.Source != FromRunall || !ok || eta != 16*time.Second {
		t.Fatalf("got %+v eta %v, want 20 of 100 at 5/s, 16s left", p, eta)
	}
	// runall-progress is preferred to a bar that moved more often.
	for i := range 50 {
		r.Line(" 50%|█    | "+strconv.Itoa(i)+"/100 [00:01<00:01, 50.00it/s]", t0.Add(5*time.Second))
	}
	if p, _ := r.Progress(); p.Source != FromRunall {
		t.Fatalf("source %v, want runall-progress", p.Source)
	}
}

func TestRunallProgressErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"runall-progress iter=abc", "iter=abc is not a number"},
		{"runall-progress of=10", "no iter="},
		{"runall-progress iter=5 step=3", `unknown field "step"`},
		{"runall-progress iter=-1", "iter=-1 is not a number"},
		{"runall-progress 5", `"5" is not name=value`},
	} {
		r := NewReader()
		_, err := r.Line(c.line, t0)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "want runall-progress iter=N [of=M]") {
			t.Errorf("%q: error %v, want one saying %q and the form", c.line, err, c.want)
		}
		if _, ok := r.Progress(); ok {
			t.Errorf("%q: read as progress", c.line)
		}
	}
}

// The rate from the timing looks back over Window from the last count before it, and goes on
// across a bar drawn again from 0 (a new epoch).
func TestRateWindowAndRestart(t *testing.T) {
	r := NewReader()
	for _, s := range []struct {
		iter int
		at   time.Duration
	}{{0, 0}, {100, 10 * time.Second}, {110, 50 * time.Second}, {120, 52 * time.Second}} {
		r.Line("runall-progress iter="+strconv.Itoa(s.iter), t0.Add(s.at))
	}
	if p, _ := r.Progress(); !near(p.Rate, 20.0/42) {
		t.Fatalf("rate %v, want 20/42 (the counts from 10 s to 52 s)", p.Rate)
	}
	r = NewReader()
	r.Line("runall-progress iter=0", t0)
	r.Line("runall-progress iter=10", t0.Add(time.Second))
	r.Line("runall-progress iter=5", t0.Add(2*time.Second))
	if p, _ := r.Progress(); p.N != 5 || p.Rate != 7.5 {
		t.Fatalf("got %v at %v/s, want 5 at 7.5/s (15 steps in 2 s)", p.N, p.Rate)
	}
	r.Restart()
	if _, ok := r.Progress(); ok {
		t.Fatal("progress after Restart")
	}
}

// A metric's steps are the last resort: shown only while nothing else is.
func TestMetricStepLastResort(t *testing.T) {
	r := NewReader()
	r.MetricStep("loss", 1, t0)
	r.MetricStep("loss", 3, t0.Add(2*time.Second))
	if p, ok := r.Progress(); !ok || p.Source != FromMetric || p.N != 3 || p.Rate != 1 {
		t.Fatalf("got %+v %v, want the metric's step 3 at 1/s", p, ok)
	}
	r.Line("{'loss': 0.4, 'learning_rate': 4e-05, 'epoch': 0.5}", t0.Add(3*time.Second))
	if p, _ := r.Progress(); p.Source != FromHFLog || p.N != 0.5 {
		t.Fatalf("got %+v, want the log dict's epoch 0.5", p)
	}
}

func TestNotProgress(t *testing.T) {
	for _, line := range []string{
		"loading data [done]",
		"Epoch 3/10",
		"{'eval_loss': 0.3}",
		"step 10/100 [warmup]",
		"runall-metric loss=0.3 step=12",
		"2026-01-02 12:00:01 [INFO] 5/10 shards, 3.2MB/s",
	} {
		r := NewReader()
		if _, err := r.Line(line, t0); err != nil {
			t.Errorf("%q: %v", line, err)
		}
		if p, ok := r.Progress(); ok {
			t.Errorf("%q read as progress %+v", line, p)
		}
	}
}

// A script that gives each bar a new label keeps the reader's bars bounded; the bar that
// moves most is still followed.
func TestBarsBounded(t *testing.T) {
	r := NewReader()
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * time.Second)
		r.Line(" 50%| | "+strconv.Itoa(i)+"/2000 [00:01<00:01, 5.00it/s]", at)
		r.Line("loss "+strings.Repeat("x", i%300)+": 1/2 [00:01<00:01, 1.00it/s]", at)
	}
	if len(r.bars) > maxBars {
		t.Fatalf("%d bars kept, want at most %d", len(r.bars), maxBars)
	}
	if p, _ := r.Progress(); p.N != 999 || p.Total != 2000 {
		t.Fatalf("following %v of %v, want the bar that moved: 999 of 2000", p.N, p.Total)
	}
}

func BenchmarkReaderLine(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"log line", "2026-01-02 12:00:01 [INFO] loading shard 5 of 10 from /data/train"},
		{"tqdm", " 45%|████▌     | 45/100 [00:09<00:11,  4.93it/s]\r"},
		{"keras", " 12/100 [==>...........................] - ETA: 3s - loss: 0.1234"},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := NewReader()
			b.ReportAllocs()
			for b.Loop() {
				r.Line(c.line, t0)
			}
		})
	}
}

// Keras's verbose=2 prints one line an epoch, as keras/src/utils/progbar.py's Progbar.update
// writes it (f"{count} - {now - self._start:.0f}s", " -" and _format_time's " 250ms/step",
// the metrics): the whole fit's steps, at the rate it says.
func TestKerasVerbose2(t *testing.T) {
	r := NewReader()
	for i, line := range []string{
		"Epoch 1/3", "12/12 - 3s - 250ms/step - loss: 0.1000 - val_loss: 0.1200",
		"Epoch 2/3", "12/12 - 3s - 250ms/step - loss: 0.0800 - val_loss: 0.1100",
	} {
		if _, err := r.Line(line, t0.Add(time.Duration(i)*3*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := r.Progress()
	if eta, ok := p.ETA(); p.N != 24 || p.Total != 36 || p.Rate != 4 || p.Unit != "step" || !ok || eta != 3*time.Second {
		t.Fatalf("got %+v (eta %v), want 24 of 36 steps at 4/s, 3s left", p, eta)
	}
}

// A physical line holding a bar's every update (\r-separated, as a log keeps them) reads as
// its last state.
func TestPhysicalLines(t *testing.T) {
	for _, c := range []struct {
		file     string
		n, total float64
	}{{"tqdm-total.txt", 40, 40}, {"tqdm-slow.txt", 4, 4}, {"keras3.txt", 24, 24}} {
		r := NewReader()
		for line := range strings.SplitSeq(string(recorded(t, c.file)), "\n") {
			if _, err := r.Line(line, t0); err != nil {
				t.Fatal(err)
			}
		}
		if p, ok := r.Progress(); !ok || p.N != c.n || p.Total != c.total {
			t.Errorf("%s: %+v, want %v of %v", c.file, p, c.n, c.total)
		}
	}
}
