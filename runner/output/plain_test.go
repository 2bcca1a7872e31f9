package output

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// The -update flag may be registered by another test file of the package as well (the
// loader's goldens); init runs after every package-level flag.Bool, so registering here
// only when nobody has avoids a "flag redefined" panic either way.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func outUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// outGolden compares got with testdata/name, or rewrites it with -update.
func outGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if outUpdate() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func outNoEscapes(t *testing.T, what string, b []byte) {
	t.Helper()
	if i := bytes.IndexByte(b, 0x1b); i >= 0 {
		t.Errorf("%s has an escape byte at %d: %q", what, i, b[max(0, i-20):min(len(b), i+20)])
	}
}

var outT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// outClock is a fixed clock the test moves by hand.
type outClock struct{ now time.Time }

func (c *outClock) Now() time.Time { return c.now }

// outPlan is a small task file: a setup step, a block of three trials (one a sequence,
// one with retries) and a report whose output is hidden.
func outPlan() *plan.Plan {
	train := &plan.Task{ID: 5, Name: "train", Cmd: "python train.py", ShowOutput: true}
	eval := &plan.Task{ID: 6, Name: "eval", Cmd: "python eval.py", ShowOutput: true}
	return &plan.Plan{
		File:   "tasks.yml",
		Config: plan.Config{MaxParallel: 4, ShowOutput: true, ShowFailureReport: true, ShowTaskTimes: true},
		Tasks: []*plan.Task{
			{ID: 1, Name: "prepare data", Cmd: "./prepare.sh", ShowOutput: true},
			{ID: 2, Name: "trials", Parallel: []*plan.Task{
				{ID: 3, Name: "trial lr=0.01", Cmd: "python train.py --lr 0.01", ShowOutput: true},
				{ID: 4, Name: "trial lr=0.1", Steps: []*plan.Task{train, eval}},
				{ID: 7, Name: "trial lr=1", Cmd: "python train.py --lr 1", ShowOutput: true, Retries: 2},
			}},
			{ID: 8, Name: "report", Cmd: "./report.sh"},
		},
	}
}

// outStep is one scripted call: an event, or a Tick when ev is nil.
type outStep struct {
	at time.Duration
	ev *event.Event
}

// outScript is a run of outPlan as the scheduler would report it, with two status ticks.
func outScript(p *plan.Plan) []outStep {
	prep, block, report := p.Tasks[0], p.Tasks[1], p.Tasks[2]
	a, seq, c := block.Parallel[0], block.Parallel[1], block.Parallel[2]
	train, eval := seq.Steps[0], seq.Steps[1]
	gpu0, gpu1 := "GPU-5f0c1a2b-1111-2222-3333-444455556666", "GPU-77ab90cd-1111-2222-3333-444455556666"
	e := func(at time.Duration, ev event.Event) outStep {
		ev.Time = outT0.Add(at)
		return outStep{at, &ev}
	}
	tick := func(at time.Duration) outStep { return outStep{at, nil} }
	const needs = "needs 7.0 GiB; GPU0 5.2 GiB free, 3.1 GiB reserved"
	return []outStep{
		e(0, event.Event{Kind: event.SyncProgress, Line: "download s3://bucket/data: 3/10 files, 1.2 GiB"}),
		e(1*time.Second, event.Event{Kind: event.TaskStarted, Task: prep, Attempt: 1}),
		e(1500*time.Millisecond, event.Event{Kind: event.TaskOutput, Task: prep, Stream: "stdout", Line: "fetching data"}),
		e(2*time.Second, event.Event{Kind: event.TaskOutput, Task: prep, Stream: "stderr", Line: "\x1b[33mwarning\x1b[0m: cache miss"}),
		e(2*time.Second, event.Event{Kind: event.TaskOutput, Task: prep, Stream: "stdout", Line: "progress  10%\rprogress 100%"}),
		e(3*time.Second, event.Event{Kind: event.TaskEnded, Task: prep, Attempt: 1, Status: results.StatusOK, Duration: 2 * time.Second}),
		e(3*time.Second, event.Event{Kind: event.TaskStarted, Task: a, Attempt: 1, Devices: []string{gpu0}}),
		e(3*time.Second, event.Event{Kind: event.TaskWaiting, Task: seq, Reason: needs}),
		e(3*time.Second, event.Event{Kind: event.TaskStarted, Task: c, Attempt: 1, Devices: []string{gpu1}}),
		e(4*time.Second, event.Event{Kind: event.TaskWaiting, Task: seq, Reason: needs}), // same reason: no line
		e(5*time.Second, event.Event{Kind: event.TaskOutput, Task: a, Stream: "stdout", Line: "epoch 1/10 loss 2.31"}),
		e(5*time.Second, event.Event{Kind: event.TaskMemory, Task: a, Memory: 5 << 30, Peak: 6 << 30}), // plain: no line
		e(9*time.Second, event.Event{Kind: event.TaskEnded, Task: c, Attempt: 1, Status: results.StatusFailed, ExitCode: 1, Duration: 6 * time.Second, Reason: "out of GPU memory; requeued",
			Try: &results.Attempt{N: 1, Class: "oom", ExitCode: 1}}),
		e(9*time.Second, event.Event{Kind: event.TaskWaiting, Task: c, Reason: "requeued after running out of GPU memory; now needs 9.0 GiB"}),
		tick(20 * time.Second), // no status line yet
		tick(31 * time.Second),
		e(40*time.Second, event.Event{Kind: event.TaskOutput, Task: a, Stream: "stderr", Line: "Traceback (most recent call last):"}),
		e(41*time.Second, event.Event{Kind: event.TaskEnded, Task: a, Attempt: 1, Status: results.StatusFailed, ExitCode: 3, Duration: 38 * time.Second,
			Try: &results.Attempt{N: 1, Class: "crashed", ExitCode: 3}}),
		e(41*time.Second, event.Event{Kind: event.TaskStarted, Task: train, Attempt: 1, Devices: []string{gpu0}}),
		e(42*time.Second, event.Event{Kind: event.TaskStarted, Task: c, Attempt: 2, Devices: []string{gpu0, gpu1}}),
		e(45*time.Second, event.Event{Kind: event.SyncProgress, Line: "upload ./runs: 2/5 files, 300 MiB of 1.1 GiB"}),
		e(50*time.Second, event.Event{Kind: event.TaskOutput, Task: train, Stream: "stdout", Line: "step 100\tloss 0.5"}),
		e(55*time.Second, event.Event{Kind: event.RunStatus, Line: "2 running, 0 waiting"}),
		tick(62 * time.Second), // the RunStatus event just said it
		e(70*time.Second, event.Event{Kind: event.TaskEnded, Task: train, Attempt: 1, Status: results.StatusOK, Duration: 29 * time.Second}),
		e(70*time.Second, event.Event{Kind: event.TaskStarted, Task: eval, Attempt: 1, Devices: []string{gpu0}}),
		e(80*time.Second, event.Event{Kind: event.TaskEnded, Task: eval, Attempt: 1, Status: results.StatusOK, Duration: 10 * time.Second}),
		e(85*time.Second, event.Event{Kind: event.SyncProgress, Task: a, Line: "upload of ./runs/lr=0.01 failed: access denied"}),
		e(90*time.Second, event.Event{Kind: event.TaskEnded, Task: c, Attempt: 2, Status: results.StatusIgnored, ExitCode: -1, Duration: 48 * time.Second, Reason: "timeout after 45s (ignored)"}),
		tick(91 * time.Second),
		e(91*time.Second, event.Event{Kind: event.TaskOutput, Task: report, Stream: "stdout", Line: "hidden: show-output is off"}),
		e(91*time.Second, event.Event{Kind: event.TaskSkipped, Task: report, Reason: "stop-on-failure: trial lr=0.01 failed"}),
		e(92*time.Second, event.Event{Kind: event.RunEnded, Status: results.StatusFailed}),
	}
}

// outResults is what the scheduler would hand Close after script.
func outResults() *results.Run {
	at := func(s int) time.Time { return outT0.Add(time.Duration(s) * time.Second) }
	return &results.Run{
		File: "tasks.yml", RunID: "20260102-030405", Status: results.StatusFailed,
		StartedAt: outT0, FinishedAt: at(92), LogDir: "/logs/20260102-030405",
		Tasks: []results.Task{
			{ID: 1, Name: "prepare data", Cmd: "./prepare.sh", Status: results.StatusOK, ExitCode: 0, Attempts: 1,
				StartedAt: at(1), FinishedAt: at(3), LogFile: "/logs/20260102-030405/1-prepare-data.log"},
			{ID: 3, Name: "trial lr=0.01", Cmd: "python train.py --lr 0.01", Status: results.StatusFailed, ExitCode: 3, Attempts: 1,
				StartedAt: at(3), FinishedAt: at(41), Devices: []string{"GPU-5f0c1a2b-1111-2222-3333-444455556666"},
				GPUMemory: 7 << 30, PeakGPUMemory: 5 << 30, LogFile: "/logs/20260102-030405/3-trial-lr-0.01.log",
				StdoutTail: []string{"epoch 1/10 loss 2.31", "epoch 2/10 loss 2.10", "\x1b[1msaving\x1b[0m checkpoint"},
				StderrTail: []string{"Traceback (most recent call last):", `  File "train.py", line 3`, "RuntimeError: boom"}},
			{ID: 5, Name: "trial lr=0.1 / train", Cmd: "python train.py", Status: results.StatusOK, Attempts: 1,
				StartedAt: at(41), FinishedAt: at(70), Devices: []string{"GPU-5f0c1a2b-1111-2222-3333-444455556666"}, GPUMemory: 7 << 30},
			{ID: 6, Name: "trial lr=0.1 / eval", Cmd: "python eval.py", Status: results.StatusOK, Attempts: 1,
				StartedAt: at(70), FinishedAt: at(80)},
			{ID: 7, Name: "trial lr=1", Cmd: "python train.py --lr 1", Status: results.StatusIgnored, ExitCode: -1, Attempts: 2, OOMRequeues: 1,
				StartedAt: at(42), FinishedAt: at(90), Reason: "timeout after 45s (ignored)",
				Devices:   []string{"GPU-5f0c1a2b-1111-2222-3333-444455556666", "GPU-77ab90cd-1111-2222-3333-444455556666"},
				GPUMemory: 9 << 30, PeakGPUMemory: 10 << 30},
			{ID: 8, Name: "report", Cmd: "./report.sh", Status: results.StatusSkipped, ExitCode: -1, Reason: "stop-on-failure: trial lr=0.01 failed"},
		},
		LearnedGPUMemory: map[string]uint64{"trial lr=0.01": 6<<30 + 300<<20},
	}
}

// outPlay feeds outScript to out on a clock that follows it, and closes out with res.
func outPlay(t *testing.T, out Output, c *outClock, steps []outStep, res *results.Run) {
	t.Helper()
	for _, s := range steps {
		c.now = outT0.Add(s.at)
		if s.ev == nil {
			out.Tick(c.now)
		} else {
			out.Event(*s.ev)
		}
	}
	c.now = outT0.Add(92 * time.Second)
	if err := out.Close(res); err != nil {
		t.Fatal(err)
	}
}

func TestPlainOutputGolden(t *testing.T) {
	p := outPlan()
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewPlain(Options{Plan: p, W: &buf, Color: true, Now: c.Now})
	outPlay(t, out, c, outScript(p), outResults())
	outNoEscapes(t, "plain output", buf.Bytes())
	outGolden(t, "plain.golden", buf.Bytes())
	if strings.Contains(buf.String(), "hidden: show-output is off") {
		t.Error("a line of a task with show-output off was printed")
	}
	if n := strings.Count(buf.String(), "[trial lr=0.1] waiting:"); n != 1 {
		t.Errorf("repeated waiting reason printed %d times, want once", n)
	}
}

func TestPlainStatusLine(t *testing.T) {
	block := &plan.Task{ID: 1, Name: "trials"}
	for i := range 8 {
		block.Parallel = append(block.Parallel, &plan.Task{ID: 10 + i, Name: "trial " + string(rune('a'+i)), Cmd: "true"})
	}
	p := &plan.Plan{Tasks: []*plan.Task{block}}
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewPlain(Options{Plan: p, W: &buf, Now: c.Now, StatusEvery: 10 * time.Second})
	for i, k := range block.Parallel {
		switch {
		case i < 5:
			out.Event(event.Event{Kind: event.TaskStarted, Task: k, Attempt: 1, Time: outT0})
		case i == 5:
			out.Event(event.Event{Kind: event.TaskEnded, Task: k, Attempt: 1, Status: results.StatusFailed, ExitCode: 1, Time: outT0})
		default:
			out.Event(event.Event{Kind: event.TaskWaiting, Task: k, Reason: "needs 7.0 GiB", Time: outT0})
		}
	}
	buf.Reset()
	out.Tick(outT0.Add(9 * time.Second))
	if buf.Len() != 0 {
		t.Fatalf("status before StatusEvery: %q", buf.String())
	}
	out.Tick(outT0.Add(130 * time.Second))
	want := "status: 5 running (trial a, trial b, trial c, +2 more), 2 waiting (trial g: needs 7.0 GiB; +1 more), 1/8 done, 1 failed, elapsed 2m10s\n"
	if buf.String() != want {
		t.Errorf("status line\n got %q\nwant %q", buf.String(), want)
	}
}

// A bar's updates drawn in place (lines ending in \r) are printed one a StatusEvery; its last
// state, which ends with a newline, and every other line are printed.
func TestPlainBarUpdates(t *testing.T) {
	task := &plan.Task{ID: 1, Name: "train", Cmd: "true", ShowOutput: true}
	var buf bytes.Buffer
	out := NewPlain(Options{Plan: &plan.Plan{Tasks: []*plan.Task{task}}, W: &buf, StatusEvery: 30 * time.Second})
	at := func(d time.Duration, line string) {
		out.Event(event.Event{Kind: event.TaskOutput, Task: task, Stream: "stderr", Line: line, Time: outT0.Add(d)})
	}
	at(0, "                \r") // a bar cleared before its first state: not its first update
	for i := range 40 {
		at(time.Duration(i)*time.Second, fmt.Sprintf("%3d%%|  | %d/40 [00:%02d<00:10, 1.00it/s]\r", i*100/40, i, i))
	}
	at(39*time.Second, "                                      \r") // tqdm clears its bar: nothing shown
	at(40*time.Second, "100%|  | 40/40 [00:40<00:00, 1.00it/s]")
	at(41*time.Second, "done")
	at(100*time.Second, "saving\r") // shown: 30 s since the last
	at(101*time.Second, "saving")   // the state shown, ended by its newline: not again
	want := "[train]   0%|  | 0/40 [00:00<00:10, 1.00it/s]\n" +
		"[train]  75%|  | 30/40 [00:30<00:10, 1.00it/s]\n" +
		"[train] 100%|  | 40/40 [00:40<00:00, 1.00it/s]\n" +
		"[train] done\n" +
		"[train] saving\n"
	if buf.String() != want {
		t.Errorf("plain output\n got %q\nwant %q", buf.String(), want)
	}
}

func TestCleanLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m", "red and bold green"},
		{" 10%|█         |\r 50%|█████     |\r100%|██████████|", "100%|██████████|"},
		{"windows line\r", "windows line"},
		{"title\x1b]0;window title\x07 after", "title after"},
		{"bell\x07 and backspace\x08", "bell and backspace"},
		{"tab\tstays", "tab\tstays"},
		{"charset \x1b(B switch", "charset  switch"},
		{"c1 \u009b control", "c1  control"},
		{"temperature 20°C", "temperature 20°C"},
		{"trailing escape \x1b", "trailing escape "},
	} {
		if got := cleanLine(tc.in); got != tc.want {
			t.Errorf("cleanLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTruncateWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello world", 8, "hello w…"},
		{"日本語のテキスト", 7, "日本語…"},
		{"abc", 0, ""},
	} {
		if got := truncateWidth(tc.in, tc.w); got != tc.want {
			t.Errorf("truncateWidth(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
		if got := displayWidth(truncateWidth(tc.in, tc.w)); got > tc.w {
			t.Errorf("truncateWidth(%q, %d) is %d wide", tc.in, tc.w, got)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.0s", 4100 * time.Millisecond: "4.1s", 59960 * time.Millisecond: "1m00s",
		130 * time.Second: "2m10s", 3*time.Hour + 5*time.Minute + 20*time.Second: "3h05m",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if IsTerminal(w, env(map[string]string{"TERM": "xterm"})) {
		t.Error("a pipe is a terminal")
	}
	if IsTerminal(nil, env(nil)) {
		t.Error("nil is a terminal")
	}
	if UseColor(Plain, env(map[string]string{"TERM": "xterm"})) {
		t.Error("colour in plain output")
	}
	if !UseColor(Live, env(map[string]string{"TERM": "xterm"})) {
		t.Error("no colour in the live view")
	}
	if UseColor(Live, env(map[string]string{"TERM": "xterm", "NO_COLOR": "1"})) {
		t.Error("colour despite NO_COLOR")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil { // only where the test has one
		defer tty.Close()
		if !IsTerminal(tty, env(nil)) {
			t.Error("a tty with TERM unset is not a terminal")
		}
		if IsTerminal(tty, env(map[string]string{"TERM": "dumb"})) {
			t.Error("TERM=dumb is a terminal")
		}
	}
}

func BenchmarkPlainOutputLine(b *testing.B) {
	task := &plan.Task{ID: 1, Name: "trial lr=0.01", Cmd: "true", ShowOutput: true}
	out := NewPlain(Options{Plan: &plan.Plan{Tasks: []*plan.Task{task}}, W: outDiscard{}})
	ev := event.Event{Kind: event.TaskOutput, Task: task, Stream: "stdout", Line: "epoch 1/10 step 100 loss 2.31", Time: outT0}
	b.ReportAllocs()
	for b.Loop() {
		out.Event(ev)
	}
}

type outDiscard struct{}

func (outDiscard) Write(p []byte) (int, error) { return len(p), nil }
