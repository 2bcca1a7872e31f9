package memwatch

import (
	"path/filepath"
	"testing"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// containerReader is the container's memory as a test sets it.
type containerReader struct{ m hostmem.Memory }

func (c containerReader) Read() (hostmem.Memory, error) { return c.m, nil }

// TestSamplesHoldTheContainer: the samples the report draws hold the container's memory
// beside the GPUs', and alone in a run without GPUs.
func TestSamplesHoldTheContainer(t *testing.T) {
	dir := t.TempDir()
	emit := func(event.Event) {} // the run's stream, with no consumer
	mem := containerReader{hostmem.Memory{Limit: 64 << 30, Used: 5 << 30}}
	w := New(&plan.Plan{}, dir, emit, nil, mem)
	w.Sample(admit.Sample{Devices: []gpu.Device{{UUID: "GPU-0", Name: "V100", Total: 32 << 30, Used: 3 << 30}}})
	w.Close()
	s, err := results.ReadSamplesFile(filepath.Join(dir, results.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Devices) != 2 || s.Devices[1] != (results.SampleDevice{UUID: results.ContainerDevice, Name: "container", Total: 64 << 30}) {
		t.Fatalf("devices %+v, want the GPU and the container", s.Devices)
	}
	if len(s.Samples) != 1 || s.Samples[0].Used["GPU-0"] != 3<<30 || s.Samples[0].Used[results.ContainerDevice] != 5<<30 {
		t.Errorf("samples %+v", s.Samples)
	}

	alone := t.TempDir()
	w = New(&plan.Plan{}, alone, emit, nil, mem)
	w.SampleContainer()
	w.Close()
	if s, _ := results.ReadSamplesFile(filepath.Join(alone, results.SamplesFile)); len(s.Devices) != 1 || s.Samples[0].Used[results.ContainerDevice] != 5<<30 {
		t.Errorf("without GPUs: %+v", s)
	}
}
