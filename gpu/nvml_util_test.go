//go:build cgo

package gpu

import (
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// TestNVMLUtilization: the device's rates as NVML gives them, and each process's latest
// sample of the window asked for, once each; a device with no samples lists no process.
func TestNVMLUtilization(t *testing.T) {
	s := newServer(t)
	var asked uint64
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * i), Memory: uint32(i)}, nvml.SUCCESS
		}
		dev.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			asked = since
			if i != 1 {
				return nil, nvml.ERROR_NOT_FOUND
			}
			return []nvml.ProcessUtilizationSample{
				{Pid: 4343, TimeStamp: since + 10, SmUtil: 30, MemUtil: 3},
				{Pid: 4242, TimeStamp: since + 10, SmUtil: 20, MemUtil: 2},
				{Pid: 4242, TimeStamp: since + 20, SmUtil: 25, MemUtil: 4}, // the later sample
			}, nvml.SUCCESS
		}
	}
	p, err := openNVML(s, NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if u, err := p.Utilization(3); err != nil || u != (Utilization{GPU: 30, Memory: 3}) {
		t.Errorf("Utilization(3) = %+v, %v; want 30%% GPU, 3%% memory", u, err)
	}
	got, err := p.ProcessUtilization(1)
	want := []ProcessUtilization{{PID: 4242, SM: 25, Memory: 4}, {PID: 4343, SM: 30, Memory: 3}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ProcessUtilization(1) = %+v, %v; want %+v", got, err, want)
	}
	if asked == 0 {
		t.Error("no window asked for: NVML would return every sample it keeps")
	}
	if got, err := p.ProcessUtilization(0); err != nil || len(got) != 0 {
		t.Errorf("ProcessUtilization(0) with no samples = %+v, %v; want none, no error", got, err)
	}
	if _, err := p.Utilization(99); err == nil {
		t.Error("Utilization(99): no error for a device that is not there")
	}
	p.Close()
	if _, err := p.ProcessUtilization(1); err == nil {
		t.Error("ProcessUtilization after Close: no error")
	}
}
