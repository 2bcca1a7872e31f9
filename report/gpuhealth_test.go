package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// TestGPUHealth (issue 45): the report (and so the live page) says each fault seen on a GPU,
// when, and what runall did; nothing for GPUs without one.
func TestGPUHealth(t *testing.T) {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	run := &results.Run{StartedAt: seen, Tasks: []results.Task{{Name: "a", Status: results.StatusOK}},
		GPUs: []results.GPU{
			{GPU: 0, Health: results.GPUHealthOK},
			{GPU: 1, Health: results.GPUHealthOutOfService, Faults: []results.GPUFault{{Fault: "xid 79 (GPU has fallen off the bus)",
				Kind: "xid", Xid: 79, Resolution: "contact support", Seen: seen, Action: results.GPUHealthOutOfService}}},
			{GPU: 2, Health: results.GPUHealthRecorded, Faults: []results.GPUFault{{Fault: "xid 13 (Graphics Engine Exception)",
				Kind: "xid", Xid: 13, Resolution: "restart the application", Seen: seen, Action: "recorded"}}},
		}}
	var b bytes.Buffer
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"GPU1: xid 79 (GPU has fallen off the bus) (NVIDIA: contact support), seen 03:04:05: out of service",
		"GPU2: xid 13 (Graphics Engine Exception) (NVIDIA: restart the application), seen 03:04:05: recorded; the GPU stays in service",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not show %q", want)
		}
	}
	if strings.Contains(page, "GPU0:") {
		t.Errorf("the report speaks of GPU 0, which had no fault")
	}
}
