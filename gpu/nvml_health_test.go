//go:build cgo

package gpu

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// healthServer is a DGX A100 whose devices answer every health read NOT_SUPPORTED, with an
// event set that delivers the events queued in events (each Wait takes one).
func healthServer(t *testing.T, events *[]nvml.EventData) *dgxa100.Server {
	t.Helper()
	s := newServer(t)
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(timeout uint32) (nvml.EventData, nvml.Return) {
				if timeout != 0 {
					t.Errorf("event set waited %d ms: a health read must not block", timeout)
				}
				if len(*events) == 0 {
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
				ev := (*events)[0]
				*events = (*events)[1:]
				return ev, nvml.SUCCESS
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	for _, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		dev.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
			if types&nvml.EventTypeXidCriticalError == 0 {
				t.Errorf("registered events %#x, without Xid critical errors", types)
			}
			return nvml.SUCCESS
		}
		dev.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		dev.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
		dev.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
	}
	return s
}

func openHealth(t *testing.T, s nvmlLib) Probe {
	t.Helper()
	p, err := openNVML(s, NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func readHealth(t *testing.T, p Probe, i int) Health {
	t.Helper()
	h, err := p.Health(i)
	if err != nil {
		t.Fatalf("Health(%d): %v", i, err)
	}
	return h
}

func TestNVMLHealthNotSupportedIsHealthy(t *testing.T) {
	var events []nvml.EventData
	p := openHealth(t, healthServer(t, &events))
	for i := range 8 {
		h := readHealth(t, p, i)
		if h.String() != "ok" || !h.XidsWatched {
			t.Errorf("gpu %d: %+v (%s), want ok with Xids watched", i, h, h)
		}
		if _, out := h.OutOfService(); out {
			t.Errorf("gpu %d: out of service with nothing reported", i)
		}
	}
}

func TestNVMLHealthXidEvent(t *testing.T) {
	var events []nvml.EventData
	s := healthServer(t, &events)
	p := openHealth(t, s)
	readHealth(t, p, 0) // starts the watch, as the run's first read does
	events = append(events,
		nvml.EventData{Device: s.Devices[3], EventType: nvml.EventTypeXidCriticalError, EventData: 79},
		nvml.EventData{Device: s.Devices[1], EventType: nvml.EventTypeXidCriticalError, EventData: 13})
	h := readHealth(t, p, 3)
	if len(h.Xids) != 1 || h.Xids[0].Xid != 79 || h.Xids[0].At.IsZero() {
		t.Fatalf("gpu 3 xids = %+v, want Xid 79 with its time", h.Xids)
	}
	f, out := h.OutOfService()
	if !out || f.Kind != FaultXid || f.Xid != 79 || f.Resolution() != ContactSupport {
		t.Errorf("gpu 3: %v out of service %v, want Xid 79 (contact support)", f, out)
	}
	if h.String() != "xid 79 (GPU has fallen off the bus)" {
		t.Errorf("gpu 3 = %q", h.String())
	}
	// The other device's event was drained by the same read and kept for it.
	h1 := readHealth(t, p, 1)
	if len(h1.Xids) != 1 || h1.Xids[0].Xid != 13 {
		t.Fatalf("gpu 1 xids = %+v, want Xid 13", h1.Xids)
	}
	if _, out := h1.OutOfService(); out {
		t.Error("an application Xid (13) took gpu 1 out of service")
	}
	if h := readHealth(t, p, 0); len(h.Xids) != 0 {
		t.Errorf("gpu 0 xids = %+v, want none", h.Xids)
	}
}

func TestNVMLHealthNoEvents(t *testing.T) {
	var events []nvml.EventData
	s := healthServer(t, &events)
	for _, d := range s.Devices {
		d.(*dgxa100.Device).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	}
	p := openHealth(t, s)
	h := readHealth(t, p, 0)
	if h.XidsWatched || h.String() != "ok" {
		t.Errorf("health = %+v, want ok, Xids not watched", h)
	}
}

func TestNVMLHealthPolled(t *testing.T) {
	tests := []struct {
		name  string
		set   func(d *dgxa100.Device)
		want  string
		kind  FaultKind
		memry bool
	}{
		{"pending retirement", func(d *dgxa100.Device) {
			d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
		}, "pages pending retirement", FaultPendingRetirement, false},
		{"remap failure", func(d *dgxa100.Device) {
			d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 2, false, true, nvml.SUCCESS }
		}, "row remapping failed", FaultRemapFailure, false},
		{"ecc", func(d *dgxa100.Device) {
			d.GetTotalEccErrorsFunc = func(et nvml.MemoryErrorType, ct nvml.EccCounterType) (uint64, nvml.Return) {
				if et != nvml.MEMORY_ERROR_TYPE_UNCORRECTED || ct != nvml.VOLATILE_ECC {
					return 7, nvml.SUCCESS // a corrected or aggregate count: not what health reads
				}
				return 2, nvml.SUCCESS
			}
		}, "2 uncorrectable ECC error(s)", FaultECC, true},
		{"lost", func(d *dgxa100.Device) {
			d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
		}, "GPU lost", FaultLost, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []nvml.EventData
			s := healthServer(t, &events)
			tt.set(s.Devices[2].(*dgxa100.Device))
			p := openHealth(t, s)
			h := readHealth(t, p, 2)
			f, out := h.OutOfService()
			if h.String() != tt.want || !out || f.Kind != tt.kind || f.MemoryError() != tt.memry {
				t.Errorf("health = %q (%+v), out of service %v, memory %v; want %q out of service, memory %v",
					h, f, out, f.MemoryError(), tt.want, tt.memry)
			}
			if h := readHealth(t, p, 1); h.String() != "ok" {
				t.Errorf("gpu 1 = %q, want ok", h)
			}
		})
	}
}

func TestNVMLHealthError(t *testing.T) {
	var events []nvml.EventData
	s := healthServer(t, &events)
	s.Devices[0].(*dgxa100.Device).GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return 0, nvml.ERROR_UNKNOWN
	}
	p := openHealth(t, s)
	if _, err := p.Health(0); !errors.Is(err, nvml.ERROR_UNKNOWN) {
		t.Errorf("Health(0) error = %v, want one wrapping ERROR_UNKNOWN", err)
	}
	if _, err := p.Health(8); err == nil {
		t.Error("Health(8) of 8 devices: no error")
	}
}

func TestNVMLHealthRemapSymbolMissing(t *testing.T) {
	var events []nvml.EventData
	s := healthServer(t, &events)
	for _, d := range s.Devices {
		d.(*dgxa100.Device).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
			t.Error("GetRemappedRows called although the driver lacks it")
			return 0, 0, false, true, nvml.SUCCESS
		}
	}
	p := openHealth(t, without{s, "nvmlDeviceGetRemappedRows"})
	if h := readHealth(t, p, 0); h.String() != "ok" {
		t.Errorf("health = %q, want ok", h)
	}
}

// TestNVMLHealthReal: on a machine with a GPU, the health watch starts and each GPU's health
// reads without error (no fault is injected there: what it reports is logged).
func TestNVMLHealthReal(t *testing.T) {
	p, err := OpenNVML(NVMLOptions{})
	if err != nil {
		if !errors.Is(err, ErrNoGPU) {
			t.Fatalf("%q does not wrap ErrNoGPU", err)
		}
		t.Logf("no GPU here: %v", err)
		return
	}
	defer p.Close()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first read starts the watch, the second drains it
		for _, d := range devs {
			h, err := p.Health(d.Index)
			if err != nil {
				t.Errorf("gpu %d: %v", d.Index, err)
			}
			t.Logf("gpu %d %s: health %s, xids watched %v, uncorrectable ECC %d", d.Index, d.Name, h, h.XidsWatched, h.UncorrectedECC)
		}
	}
}
