package output

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

func TestSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	WriteSummary(&buf, outResults(), SummaryOptions{FailureReport: true})
	outNoEscapes(t, "summary without colour", buf.Bytes())
	outGolden(t, "summary.golden", buf.Bytes())
	for _, want := range []string{"RuntimeError: boom", "epoch 2/10 loss 2.10", "log: /logs/20260102-030405/3-trial-lr-0.01.log"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("failure report lacks %q", want)
		}
	}
}

func TestSummaryOptions(t *testing.T) {
	res := outResults()
	res.Tasks[1].StdoutTail = []string{"1", "2", "3", "4", "5"}
	var buf bytes.Buffer
	WriteSummary(&buf, res, SummaryOptions{TailLines: 2, FailureReport: true})
	if s := buf.String(); !strings.Contains(s, "stdout (last 2 lines):\n    4\n    5\n  stderr") {
		t.Errorf("TailLines 2:\n%s", s)
	}
	buf.Reset()
	WriteSummary(&buf, res, SummaryOptions{})
	if strings.Contains(buf.String(), "stderr") {
		t.Errorf("failure report without FailureReport:\n%s", buf.String())
	}

	// Colour must not break the table's columns: every status cell gets codes of one length.
	var plain, color bytes.Buffer
	WriteSummary(&plain, res, SummaryOptions{})
	WriteSummary(&color, res, SummaryOptions{Color: true})
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31m")) {
		t.Error("no colour with Color")
	}
	if got := sgrPattern.ReplaceAllString(color.String(), ""); got != plain.String() {
		t.Errorf("coloured summary differs from the plain one beyond its codes:\n%s\n---\n%s", got, plain.String())
	}
}

var sgrPattern = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestSummaryNoGPUColumn(t *testing.T) {
	var buf bytes.Buffer
	WriteSummary(&buf, &results.Run{Status: results.StatusOK, Tasks: []results.Task{{ID: 1, Name: "a", Status: results.StatusOK, Attempts: 1}}}, SummaryOptions{})
	if strings.Contains(buf.String(), "GPU") {
		t.Errorf("GPU column without GPU tasks:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "Summary: 1 ok\n") {
		t.Errorf("summary line:\n%s", buf.String())
	}
}

// No row of the table is wider than 80 columns, however long the names and reasons.
func TestSummaryFitsWidth(t *testing.T) {
	res := outResults()
	res.Tasks = append(res.Tasks, results.Task{ID: 99, Name: strings.Repeat("a very long trial name ", 8),
		Status: results.StatusStopped, ExitCode: -1, Attempts: 1, Reason: "killed by SIGTERM: runall was stopped by SIGTERM"})
	var buf bytes.Buffer
	WriteSummary(&buf, res, SummaryOptions{})
	table, _, _ := strings.Cut(buf.String(), "\n\n")
	for _, line := range strings.Split(table, "\n") {
		if w := displayWidth(line); w > 80 {
			t.Errorf("%d columns: %q", w, line)
		}
	}
	if !strings.Contains(table, "stopped") || !strings.Contains(buf.String(), "1 stopped") {
		t.Errorf("the stopped trial is not shown or counted:\n%s", buf.String())
	}
}

// TestSkippedRowShowsNoExitCode: a skipped trial that ran here before (paused, then resumed
// and ended by another runall) is shown skipped, with no exit code, not -1.
func TestSkippedRowShowsNoExitCode(t *testing.T) {
	var buf bytes.Buffer
	res := &results.Run{Status: results.StatusOK, Tasks: []results.Task{{ID: 1, Name: "a", Status: results.StatusSkipped,
		ExitCode: -1, Attempts: 1, Reason: "paused here, then resumed and ended by another runall of the sweep"}}}
	WriteSummary(&buf, res, SummaryOptions{})
	if strings.Contains(buf.String(), "-1") || !regexp.MustCompile(`skipped +- `).MatchString(buf.String()) {
		t.Errorf("the skipped row shows an exit code:\n%s", buf.String())
	}
}
