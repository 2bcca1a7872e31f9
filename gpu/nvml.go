//go:build cgo

package gpu

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/runall/runall/internal/procfs"
)

// nvmlLib is the part of go-nvml's 391-method nvml.Interface that runall calls, so that tests
// can stand in go-nvml's mocks or a struct overriding one method.
type nvmlLib interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(index int) (nvml.Device, nvml.Return)
	Extensions() nvml.ExtendedInterface // LookupSymbol: is a versioned call in the driver?
	EventSetCreate() (nvml.EventSet, nvml.Return)
}

// nvmlDevice is the part of nvml.Device runall calls.
type nvmlDevice interface {
	GetUUID() (string, nvml.Return)
	GetName() (string, nvml.Return)
	GetMemoryInfo() (nvml.Memory, nvml.Return)
	GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return)
	GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return)
	GetGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return)
	GetUtilizationRates() (nvml.Utilization, nvml.Return)
	GetProcessUtilization(lastSeenTimestamp uint64) ([]nvml.ProcessUtilizationSample, nvml.Return)
	// Health (nvml_health.go).
	RegisterEvents(eventTypes uint64, set nvml.EventSet) nvml.Return
	GetRetiredPagesPendingStatus() (nvml.EnableState, nvml.Return)
	GetRemappedRows() (corrRows, uncRows int, isPending, failureOccurred bool, ret nvml.Return)
	GetTotalEccErrors(errorType nvml.MemoryErrorType, counterType nvml.EccCounterType) (uint64, nvml.Return)
}

type nvmlGPU struct {
	dev  nvmlDevice
	uuid string
	name string
}

// nvmlProbe measures the visible GPUs through NVML. Its fields are fixed at open and NVML
// itself is thread-safe; the lock only keeps Close (which unloads the library, after which a
// call would jump into unmapped memory) from overlapping a measurement.
type nvmlProbe struct {
	lib   nvmlLib
	gpus  []nvmlGPU // visible devices, re-indexed 0..n-1
	memV2 bool      // the driver has nvmlDeviceGetMemoryInfo_v2
	proc  string    // procfs root, for process names
	xids  xidWatch  // the Xid events, from the first Health read on

	mu     sync.RWMutex
	closed bool
}

// OpenNVML initialises NVML and returns a Probe over the GPUs that runall's visibility
// variables leave, numbered 0..n-1 in that order. With no library, driver or GPU the error
// wraps ErrNoGPU and says what to do.
func OpenNVML(opts NVMLOptions) (Probe, error) {
	return openNVML(nvml.New(), opts)
}

func openNVML(lib nvmlLib, opts NVMLOptions) (p Probe, err error) {
	// go-nvml panics rather than returning an error in a few paths (a mock method left
	// unset, an unexpected library state); runall must report "no GPU", not crash.
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: NVML failed: %v; %s", ErrNoGPU, r, noGPUHint)
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, initError(ret)
	}
	probe := &nvmlProbe{lib: lib, proc: "/proc", xids: xidWatch{now: time.Now}}
	if err := probe.discover(opts); err != nil {
		lib.Shutdown()
		return nil, err
	}
	return probe, nil
}

func initError(ret nvml.Return) error {
	var what string
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		what = "NVML library not found (libnvidia-ml.so.1: is the NVIDIA driver installed, and the container started with --gpus all?)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		what = "the NVIDIA kernel driver is not loaded (does nvidia-smi work?)"
	case nvml.ERROR_NO_PERMISSION:
		what = "no permission to use NVML (check access to /dev/nvidia*)"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		what = "the NVML library and the kernel driver versions differ (reboot or reload the driver)"
	default:
		return fmt.Errorf("%w: NVML init: %w; %s", ErrNoGPU, ret, noGPUHint)
	}
	return fmt.Errorf("%w: %s; %s", ErrNoGPU, what, noGPUHint)
}

func (p *nvmlProbe) discover(opts NVMLOptions) error {
	n, ret := p.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("%w: NVML device count: %w; %s", ErrNoGPU, ret, noGPUHint)
	}
	if n == 0 {
		return fmt.Errorf("%w: NVML reports no GPUs (are the devices passed to the container?); %s", ErrNoGPU, noGPUHint)
	}
	all := make([]nvmlGPU, n)
	uuids := make([]string, n)
	for i := range all {
		d, ret := p.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("nvml: device %d: %w", i, ret)
		}
		uuid, ret := d.GetUUID()
		if ret != nvml.SUCCESS {
			return fmt.Errorf("nvml: device %d: uuid: %w", i, ret)
		}
		name, ret := d.GetName()
		if ret != nvml.SUCCESS {
			name = "" // cosmetic; a device without a name is still usable
		}
		all[i] = nvmlGPU{dev: d, uuid: uuid, name: name}
		uuids[i] = uuid
	}
	vis, err := visibleDevices(uuids, opts)
	if err != nil {
		return err
	}
	for _, i := range vis {
		p.gpus = append(p.gpus, all[i])
	}
	// Calling a versioned function the installed driver lacks jumps to a null symbol (go-nvml
	// links them lazily), so ask first.
	p.memV2 = p.lib.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	return nil
}

// Devices implements Probe.
func (p *nvmlProbe) Devices() ([]Device, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return nil, errClosed
	}
	out := make([]Device, len(p.gpus))
	for i, g := range p.gpus {
		total, used, free, err := p.memory(g.dev)
		if err != nil {
			return nil, fmt.Errorf("nvml: gpu %d (%s): memory: %w", i, g.uuid, err)
		}
		out[i] = Device{Index: i, UUID: g.uuid, Name: g.name, Total: total, Used: used, Free: free}
	}
	return out, nil
}

// memory prefers the v2 call, whose Free does not count the driver's reservation as
// available; Used then includes that reservation so that Used+Free is Total either way.
func (p *nvmlProbe) memory(d nvmlDevice) (total, used, free uint64, err error) {
	if p.memV2 {
		m, ret := d.GetMemoryInfo_v2()
		switch ret {
		case nvml.SUCCESS:
			return m.Total, m.Used + m.Reserved, m.Free, nil
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_ARGUMENT_VERSION_MISMATCH:
			// older driver or device: fall back to v1
		default:
			return 0, 0, 0, ret
		}
	}
	m, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return 0, 0, 0, ret
	}
	return m.Total, m.Used, m.Free, nil
}

// Processes implements Probe: the compute and graphics processes on the device, once each.
// PIDs are as NVML reports them: recent drivers translate them into runall's pid namespace,
// older ones inside a container report the host's (see Process.Local).
func (p *nvmlProbe) Processes(index int) ([]Process, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	g, err := p.gpu(index)
	if err != nil {
		return nil, err
	}
	compute, ret := g.dev.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml: gpu %d (%s): processes: %w", index, g.uuid, ret)
	}
	graphics, ret := g.dev.GetGraphicsRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED { // compute-only GPUs have none
		return nil, fmt.Errorf("nvml: gpu %d (%s): graphics processes: %w", index, g.uuid, ret)
	}
	var out []Process
	for _, in := range slices.Concat(compute, graphics) {
		mem := in.UsedGpuMemory
		if mem == math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE as an unsigned long long
			mem = 0 // NVML cannot say (no permission); 0 rather than 16 EiB
		}
		// A process with a context of both kinds is listed twice, with the same memory.
		if i := slices.IndexFunc(out, func(q Process) bool { return q.PID == in.Pid }); i >= 0 {
			out[i].UsedMemory = max(out[i].UsedMemory, mem)
			continue
		}
		local := procfs.HoldsOpen(p.proc, in.Pid, "/dev/nvidia")
		name := ""
		if local {
			name = procfs.Comm(p.proc, in.Pid)
		}
		out = append(out, Process{PID: in.Pid, Name: name, UsedMemory: mem, Local: local})
	}
	return out, nil
}

// gpu is the visible device with the given index; hold p.mu for reading.
func (p *nvmlProbe) gpu(index int) (nvmlGPU, error) {
	if p.closed {
		return nvmlGPU{}, errClosed
	}
	if index < 0 || index >= len(p.gpus) {
		return nvmlGPU{}, fmt.Errorf("nvml: no gpu %d (%d visible)", index, len(p.gpus))
	}
	return p.gpus[index], nil
}

// Env implements Probe: UUIDs, which survive any renumbering, and PCI bus order so that
// CUDA's own numbering inside the trial matches NVML's.
func (p *nvmlProbe) Env(indices []int) []string {
	uuids := make([]string, 0, len(indices))
	for _, i := range indices {
		if i >= 0 && i < len(p.gpus) {
			uuids = append(uuids, p.gpus[i].uuid)
		}
	}
	return []string{
		EnvCUDAVisibleDevices + "=" + strings.Join(uuids, ","),
		EnvCUDADeviceOrder + "=PCI_BUS_ID",
	}
}

// Close implements Probe; it shuts NVML down once.
func (p *nvmlProbe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.xids.close()
	if ret := p.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %w", ret)
	}
	return nil
}
