package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// sharedRun is a run whose trials shared GPUs by progress.
func sharedRun() *results.Run {
	return &results.Run{Status: results.StatusOK, Tasks: []results.Task{{Name: "a", Status: results.StatusOK}},
		GPUSharing: &results.Sharing{Speedup: 2.4, Summary: "sharing ran this sweep 2.4x faster than one trial at a time would have (measured rates)"}}
}

// TestSummarySharing: the summary says what packing by progress bought, and says nothing of
// it for a run that packed by memory.
func TestSummarySharing(t *testing.T) {
	var b bytes.Buffer
	WriteSummary(&b, sharedRun(), SummaryOptions{})
	if want := "GPU sharing (gpu-sharing: progress): sharing ran this sweep 2.4x faster than one trial at a time would have (measured rates)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	res := sharedRun()
	res.GPUSharing = nil
	WriteSummary(&b, res, SummaryOptions{})
	if strings.Contains(b.String(), "GPU sharing") {
		t.Errorf("a run packed by memory says GPU sharing:\n%s", b.String())
	}
}

// TestJSONRunEndSharing: --output json's run_end carries what packing by progress measured.
func TestJSONRunEndSharing(t *testing.T) {
	var buf bytes.Buffer
	c := &outClock{now: outT0}
	out := NewJSON(Options{W: &buf, Now: c.Now})
	out.Close(sharedRun())
	var end struct {
		Event   string `json:"event"`
		Sharing struct {
			Speedup float64 `json:"speedup"`
			Summary string  `json:"summary"`
		} `json:"gpu_sharing"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &end); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if end.Event != "run_end" || end.Sharing.Speedup != 2.4 || !strings.HasPrefix(end.Sharing.Summary, "sharing ran this sweep 2.4x faster") {
		t.Errorf("run_end %s", buf.Bytes())
	}
}
