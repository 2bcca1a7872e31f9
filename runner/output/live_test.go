package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

func newTestLive(p *plan.Plan, w *bytes.Buffer, c *outClock, width, height int, color bool) *liveOutput {
	est := map[string]time.Duration{"prepare data": 2 * time.Second, "trial lr=0.01": time.Minute,
		"train": 30 * time.Second, "eval": 10 * time.Second, "trial lr=1": 50 * time.Second, "report": 5 * time.Second}
	return NewLive(Options{
		Plan: p, W: w, Color: color, Now: c.Now,
		Width: func() int { return width }, Height: func() int { return height },
		Estimate: func(t *plan.Task) (time.Duration, bool) { d, ok := est[t.Name]; return d, ok },
	}).(*liveOutput)
}

// feed plays the events of steps after from up to until, without the ticks.
func feed(out Output, c *outClock, steps []outStep, from, until time.Duration) {
	for _, s := range steps {
		if s.at > until {
			return
		}
		if s.at <= from && from > 0 {
			continue
		}
		c.now = outT0.Add(s.at)
		if s.ev != nil {
			out.Event(*s.ev)
		}
	}
}

// checkWidth fails when a line shows wider than the terminal allows.
func checkWidth(t *testing.T, lines []string, width int) {
	t.Helper()
	for _, l := range lines {
		if w := displayWidth(cleanLine(l)); w > width-1 {
			t.Errorf("line is %d wide, terminal %d: %q", w, width, l)
		}
	}
}

func TestLiveFrameGolden(t *testing.T) {
	var got bytes.Buffer
	for _, color := range []bool{false, true} {
		p := outPlan()
		c := &outClock{now: outT0}
		var buf bytes.Buffer
		l := newTestLive(p, &buf, c, 72, 20, color)
		steps := outScript(p)
		from := time.Duration(0)
		for _, at := range []time.Duration{31 * time.Second, 50 * time.Second, 92 * time.Second} {
			feed(l, c, steps, from, at)
			from = at
			commit, frame := l.render(c.now, false)
			checkWidth(t, append(commit, frame...), 72)
			if !color {
				outNoEscapes(t, "frame without colour", []byte(strings.Join(append(commit, frame...), "\n")))
				fmt.Fprintf(&got, "-- at %v, commit:\n%s\n-- frame:\n%s\n", at, strings.Join(commit, "\n"), strings.Join(frame, "\n"))
			} else if !strings.Contains(strings.Join(frame, ""), "\x1b[") {
				t.Error("no colour in a coloured frame")
			}
		}
		if buf.Len() != 0 {
			t.Errorf("render wrote %q", buf.String())
		}
	}
	outGolden(t, "live-frame.golden", got.Bytes())
}

func TestLiveRestoresCursor(t *testing.T) {
	p := outPlan()
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	l := newTestLive(p, &buf, c, 80, 24, true)
	feed(l, c, outScript(p), 0, 50*time.Second)
	l.Tick(c.now)
	first := buf.String()
	if !strings.HasPrefix(first, "\x1b[?25l") {
		t.Errorf("first frame does not hide the cursor: %q", first)
	}
	frameLines := l.lines
	buf.Reset()
	l.Tick(c.now)
	if want := fmt.Sprintf("\r\x1b[%dA", frameLines); !strings.HasPrefix(buf.String(), want) {
		t.Errorf("second frame starts %q, want to move up %d lines", buf.String()[:min(12, buf.Len())], frameLines)
	}
	buf.Reset()
	if err := l.Close(outResults()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	show := strings.LastIndex(out, "\x1b[?25h")
	if show < 0 || strings.LastIndex(out, "\x1b[?25l") > show || !strings.Contains(out, "\x1b[?7h") {
		t.Errorf("Close does not restore the cursor and autowrap: %q", out)
	}
	if !strings.Contains(sgrPattern.ReplaceAllString(out[show:], ""), "Summary: 3 ok, 1 failed") {
		t.Errorf("no summary after the final frame: %q", out[show:])
	}
	buf.Reset()
	l.Close(outResults())
	l.Tick(c.now)
	if buf.Len() != 0 {
		t.Errorf("output after Close: %q", buf.String())
	}
}

// bigPlan is one block of n trials.
func bigPlan(n int) *plan.Plan {
	block := &plan.Task{ID: 1, Name: "sweep"}
	for i := range n {
		block.Parallel = append(block.Parallel, &plan.Task{ID: 2 + i, Name: fmt.Sprintf("trial %03d", i), Cmd: "train", ShowOutput: true})
	}
	return &plan.Plan{Config: plan.Config{MaxParallel: 32, ShowTaskTimes: true}, Tasks: []*plan.Task{block}}
}

func TestLiveFitsHeight(t *testing.T) {
	for _, h := range []int{5, 10, 24, 60} {
		t.Run(fmt.Sprint(h), func(t *testing.T) {
			p := bigPlan(500)
			c := &outClock{now: outT0}
			var buf bytes.Buffer
			l := newTestLive(p, &buf, c, 100, h, false)
			for i, k := range p.Tasks[0].Parallel {
				ev := event.Event{Kind: event.TaskWaiting, Task: k, Reason: "needs 7.0 GiB", Time: outT0}
				switch {
				case i < 100:
					ev = event.Event{Kind: event.TaskEnded, Task: k, Status: results.StatusOK, Duration: time.Minute, Time: outT0}
				case i%50 == 0:
					ev = event.Event{Kind: event.TaskEnded, Task: k, Status: results.StatusFailed, ExitCode: 1, Time: outT0}
				case i < 120:
					ev = event.Event{Kind: event.TaskStarted, Task: k, Attempt: 1, Time: outT0}
				}
				l.Event(ev)
			}
			c.now = outT0.Add(time.Minute)
			_, frame := l.render(c.now, false)
			if len(frame) > h-1 {
				t.Fatalf("%d lines on a terminal of %d:\n%s", len(frame), h, strings.Join(frame, "\n"))
			}
			text := strings.Join(frame, "\n")
			if !strings.Contains(text, "more:") {
				t.Errorf("no count line:\n%s", text)
			}
			if h >= 10 && !strings.Contains(text, "✘ trial") {
				t.Errorf("a failed trial is not shown:\n%s", text)
			}
			if h >= 24 && !strings.Contains(text, "trial 101") {
				t.Errorf("a running trial is not shown:\n%s", text)
			}
			if h == 60 && strings.Contains(text, "trial 050") { // ok ones are only counted
				t.Errorf("a finished trial is shown:\n%s", text)
			}
			buf.Reset()
			l.Close(nil)
			if n := strings.Count(buf.String(), "\n"); n > max(h, 40) {
				t.Errorf("the final frame of a 500-trial block is %d lines", n)
			}
		})
	}
}

func TestLiveFloodDrawsNothing(t *testing.T) {
	p := bigPlan(1)
	task := p.Tasks[0].Parallel[0]
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	l := newTestLive(p, &buf, c, 80, 24, false)
	l.Event(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Time: outT0})
	lines := make([]string, 100_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("step %d loss 0.%d", i, i)
	}
	for _, s := range lines {
		l.Event(event.Event{Kind: event.TaskOutput, Task: task, Stream: "stdout", Line: s, Time: outT0})
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written without a Tick", buf.Len())
	}
	ev := event.Event{Kind: event.TaskOutput, Task: task, Stream: "stdout", Line: "step 99999 loss 0.99999", Time: outT0}
	if n := testing.AllocsPerRun(1000, func() { l.Event(ev) }); n != 0 {
		t.Errorf("an output line allocates %v times", n)
	}
	l.Tick(outT0.Add(time.Second))
	if !strings.Contains(buf.String(), "step 99999 loss 0.99999") {
		t.Errorf("the frame does not show the last line: %q", buf.String())
	}
}

func TestLiveSingleLineAndCollapse(t *testing.T) {
	p := outPlan()
	p.Config.SingleLine = true
	c := &outClock{now: outT0}
	l := newTestLive(p, &bytes.Buffer{}, c, 80, 24, false)
	feed(l, c, outScript(p), 0, 50*time.Second)
	commit, frame := l.render(c.now, false)
	if strings.Contains(strings.Join(commit, "\n"), "prepare data") || len(frame) != 1 || !strings.HasPrefix(frame[0], "2/6 done, 2 running, 1 failed") {
		t.Errorf("single-line: commit %q frame %q", commit, frame)
	}

	p = outPlan()
	p.Config.CollapseOnCompletion = true
	c = &outClock{now: outT0}
	l = newTestLive(p, &bytes.Buffer{}, c, 80, 24, false)
	feed(l, c, outScript(p), 0, 90*time.Second)
	commit, _ = l.render(c.now, false)
	if text := strings.Join(commit, "\n"); !strings.Contains(text, "\n✘ trials  3/3 done") || strings.Contains(text, "  ✘ trial lr=") {
		t.Errorf("collapsed block: %q", commit)
	}
}

func TestLiveStatusNotes(t *testing.T) {
	c := &outClock{now: outT0}
	l := newTestLive(outPlan(), &bytes.Buffer{}, c, 80, 24, false)
	l.Event(event.Event{Kind: event.RunStatus, Line: "received interrupt: stopping tasks (SIGKILL in 20s)"})
	commit, _ := l.render(outT0, false)
	if len(commit) != 1 || commit[0] != "status: received interrupt: stopping tasks (SIGKILL in 20s)" {
		t.Errorf("commit %q", commit)
	}
	if commit, _ = l.render(outT0, false); len(commit) != 0 {
		t.Errorf("note printed twice: %q", commit)
	}
}

func BenchmarkLiveOutputLine(b *testing.B) {
	p := bigPlan(1)
	task := p.Tasks[0].Parallel[0]
	l := NewLive(Options{Plan: p, W: outDiscard{}})
	ev := event.Event{Kind: event.TaskOutput, Task: task, Stream: "stdout", Line: "epoch 1/10 step 100 loss 2.31", Time: outT0}
	b.ReportAllocs()
	for b.Loop() {
		l.Event(ev)
	}
}

func BenchmarkLiveFrame500(b *testing.B) {
	p := bigPlan(500)
	c := &outClock{now: outT0}
	l := newTestLive(p, &bytes.Buffer{}, c, 120, 40, true)
	for i, k := range p.Tasks[0].Parallel {
		if i < 32 {
			l.Event(event.Event{Kind: event.TaskStarted, Task: k, Attempt: 1, Time: outT0})
		} else {
			l.Event(event.Event{Kind: event.TaskWaiting, Task: k, Reason: "needs 7.0 GiB", Time: outT0})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l.render(outT0.Add(time.Minute), false)
	}
}
