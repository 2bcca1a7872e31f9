package prom

import (
	"testing"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/results"
)

// TestGPUOutOfService: each sampled GPU is in service (0) until runall takes it out (1); a
// requeue after a GPU fault is not counted as an out-of-memory one.
func TestGPUOutOfService(t *testing.T) {
	p := plantest.Load(t, "tasks: [{cmd: a}]\n")
	m := New(p)
	m.GPUs(admit.Sample{Devices: []gpu.Device{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}}})
	m.GPUOutOfService(1)
	m.Event(event.Event{Kind: event.TaskEnded, End: event.EndRequeue, Task: p.Tasks[0],
		Try: &results.Attempt{Class: string(failclass.GPUFault)}}, nil)
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, ooms := map[string]float64{}, -1.0
	for _, f := range fams {
		switch f.GetName() {
		case "runall_gpu_out_of_service":
			for _, s := range f.GetMetric() {
				got[s.GetLabel()[0].GetValue()] = s.GetGauge().GetValue()
			}
		case "runall_oom_requeues_total":
			ooms = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if len(got) != 2 || got["0"] != 0 || got["1"] != 1 {
		t.Errorf("runall_gpu_out_of_service = %v, want GPU 0 at 0, GPU 1 at 1", got)
	}
	if ooms != 0 {
		t.Errorf("runall_oom_requeues_total = %v, want 0: the requeue was a GPU fault's", ooms)
	}
}
