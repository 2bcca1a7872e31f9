//go:build cgo

package gpu

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/runall/runall/size"
)

const gi = uint64(1) << 30

// newServer is a DGX A100 whose devices report memory (through v2 and v1) and processes.
func newServer(t *testing.T) *dgxa100.Server {
	t.Helper()
	s := dgxa100.New()
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		// i GiB used by processes, half a GiB reserved by the driver: v1 counts the reservation
		// in Used, v2 apart; Free is the same.
		used := uint64(i) * gi
		dev.MemoryInfo = nvml.Memory{Total: 40 * gi, Used: used + gi/2, Free: 40*gi - gi/2 - used}
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 40 * gi, Reserved: gi / 2, Used: used, Free: 40*gi - gi/2 - used}, nvml.SUCCESS
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			if i != 1 {
				return nil, nvml.SUCCESS
			}
			return []nvml.ProcessInfo{
				{Pid: 4242, UsedGpuMemory: gi},
				{Pid: 4343, UsedGpuMemory: math.MaxUint64},
			}, nvml.SUCCESS
		}
		dev.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			if i != 1 {
				return nil, nvml.ERROR_NOT_SUPPORTED // as on compute-only GPUs
			}
			// 4242 has a graphics context too: listed in both, counted once.
			return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: gi}, {Pid: 4444, UsedGpuMemory: gi / 4}}, nvml.SUCCESS
		}
	}
	return s
}

func serverUUIDs(s *dgxa100.Server) []string {
	var out []string
	for _, d := range s.Devices {
		out = append(out, d.(*dgxa100.Device).UUID)
	}
	return out
}

func TestNVMLDevices(t *testing.T) {
	s := newServer(t)
	for _, d := range s.Devices {
		d.(*dgxa100.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			t.Error("GetMemoryInfo called although GetMemoryInfo_v2 works")
			return nvml.Memory{}, nvml.ERROR_UNKNOWN
		}
	}
	p, err := openNVML(s, NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	uuids := serverUUIDs(s)
	if len(devs) != 8 {
		t.Fatalf("got %d devices, want 8", len(devs))
	}
	for i, d := range devs {
		used := uint64(i)*gi + gi/2
		want := Device{Index: i, UUID: uuids[i], Name: "Mock NVIDIA A100-SXM4-40GB", Total: 40 * gi, Used: used, Free: 40*gi - used}
		if d != want {
			t.Errorf("device %d = %+v, want %+v", i, d, want)
		}
	}
	procs, err := p.Processes(1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{{PID: 4242, UsedMemory: gi}, {PID: 4343, UsedMemory: 0}, {PID: 4444, UsedMemory: gi / 4}}
	if !slices.Equal(procs, want) {
		t.Errorf("processes = %+v, want %+v", procs, want)
	}
	if _, err := p.Processes(8); err == nil {
		t.Error("Processes(8) on 8 devices: no error")
	}
}

// without is a driver that lacks one symbol (nvmlDeviceGetMemoryInfo_v2, say): the probe
// must not call it.
type without struct {
	*dgxa100.Server
	symbol string
}

func (s without) Extensions() nvml.ExtendedInterface { return s }
func (s without) LookupSymbol(name string) error {
	if name == s.symbol {
		return errors.New("undefined symbol")
	}
	return nil
}

func TestNVMLMemoryFallback(t *testing.T) {
	t.Run("symbol missing", func(t *testing.T) {
		s := newServer(t)
		for _, d := range s.Devices {
			d.(*dgxa100.Device).GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
				t.Error("GetMemoryInfo_v2 called although the driver lacks it")
				return nvml.Memory_v2{}, nvml.ERROR_UNKNOWN
			}
		}
		checkV1Memory(t, without{s, "nvmlDeviceGetMemoryInfo_v2"})
	})
	t.Run("not supported", func(t *testing.T) {
		s := newServer(t)
		for _, d := range s.Devices {
			d.(*dgxa100.Device).GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
				return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED
			}
		}
		checkV1Memory(t, s)
	})
}

func checkV1Memory(t *testing.T, lib nvmlLib) {
	t.Helper()
	p, err := openNVML(lib, NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if d := devs[3]; d.Total != 40*gi || d.Used != 3*gi+gi/2 || d.Free != 36*gi+gi/2 {
		t.Errorf("device 3 = %+v, want v1's 40/3.5/36.5 GiB", d)
	}
}

func TestNVMLVisibility(t *testing.T) {
	s := newServer(t)
	u := serverUUIDs(s)
	tests := []struct {
		name    string
		opts    NVMLOptions
		want    []int // server indices, in probe order
		noGPU   bool  // error wraps ErrNoGPU
		wantErr string
	}{
		{name: "unset", opts: NVMLOptions{}, want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "indices", opts: cuda("5,2"), want: []int{5, 2}},
		{name: "uuids", opts: cuda(u[7] + "," + u[1]), want: []int{7, 1}},
		{name: "uuid prefix", opts: cuda(u[4][:16]), want: []int{4}},
		{name: "spaces", opts: cuda(" 3 , 4 "), want: []int{3, 4}},
		{name: "all", opts: cuda("all"), want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "stop at -1", opts: cuda("0,-1,3"), want: []int{0}},
		{name: "empty hides all", opts: cuda(""), noGPU: true},
		{name: "none", opts: cuda("none"), noGPU: true},
		{name: "-1", opts: cuda("-1"), noGPU: true},
		{name: "NoDevFiles", opts: cuda("NoDevFiles"), noGPU: true},
		{name: "index out of range", opts: cuda("0,8"), wantErr: "no GPU with index 8"},
		{name: "unknown uuid", opts: cuda("GPU-00000000-dead"), wantErr: "no GPU with UUID"},
		{name: "twice", opts: cuda("1," + u[1]), wantErr: "listed twice"},
		{name: "mig", opts: cuda("MIG-1234"), wantErr: "MIG device"},
		{name: "nvidia none", opts: NVMLOptions{NVIDIAVisibleDevices: "none"}, noGPU: true},
		{name: "nvidia void", opts: NVMLOptions{NVIDIAVisibleDevices: "void"}, noGPU: true},
		{name: "nvidia all", opts: NVMLOptions{NVIDIAVisibleDevices: "all"}, want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "nvidia uuids", opts: NVMLOptions{NVIDIAVisibleDevices: u[6] + "," + u[2]}, want: []int{6, 2}},
		// The host sees all 8, so the runtime has not applied the host indices: runall does.
		{name: "nvidia host indices", opts: NVMLOptions{NVIDIAVisibleDevices: "3,4"}, want: []int{3, 4}},
		{name: "nvidia then cuda", opts: NVMLOptions{NVIDIAVisibleDevices: u[3] + "," + u[4], CUDAVisibleDevices: "1", CUDAVisibleDevicesSet: true}, want: []int{4}},
		{name: "nvidia then cuda out of range", opts: NVMLOptions{NVIDIAVisibleDevices: "3,4", CUDAVisibleDevices: "2", CUDAVisibleDevicesSet: true}, wantErr: "no GPU with index 2 (2 visible)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := openNVML(s, tt.opts)
			switch {
			case tt.noGPU || tt.wantErr != "":
				if err == nil {
					p.Close()
					t.Fatal("no error")
				}
				if errors.Is(err, ErrNoGPU) != tt.noGPU {
					t.Errorf("errors.Is(%q, ErrNoGPU) = %v, want %v", err, !tt.noGPU, tt.noGPU)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not say %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			defer p.Close()
			devs, err := p.Devices()
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for i, d := range devs {
				if d.Index != i {
					t.Errorf("device %d has Index %d", i, d.Index)
				}
				got = append(got, slices.Index(u, d.UUID))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("visible = %v, want %v", got, tt.want)
			}
		})
	}
}

// Inside a container the runtime has already applied NVIDIA_VISIBLE_DEVICES=2,3 (host
// indices): NVML sees two devices numbered 0 and 1, which runall must not filter again.
func TestNVMLVisibilityAppliedByRuntime(t *testing.T) {
	s := newServer(t)
	s.Devices = [8]nvml.Device{s.Devices[2], s.Devices[3]}
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 2, nvml.SUCCESS }
	p, err := openNVML(s, NVMLOptions{NVIDIAVisibleDevices: "2,3"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 {
		t.Errorf("got %d devices, want the 2 the runtime passed in", len(devs))
	}
}

func cuda(v string) NVMLOptions {
	return NVMLOptions{CUDAVisibleDevices: v, CUDAVisibleDevicesSet: true}
}

func TestNVMLEnv(t *testing.T) {
	s := newServer(t)
	u := serverUUIDs(s)
	p, err := openNVML(s, cuda("6,3,5"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := p.Env([]int{2, 0})
	want := []string{"CUDA_VISIBLE_DEVICES=" + u[5] + "," + u[6], "CUDA_DEVICE_ORDER=PCI_BUS_ID"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

// initFails is a machine whose NVML Init fails with ret.
type initFails struct {
	*dgxa100.Server
	ret nvml.Return
}

func (s initFails) Init() nvml.Return { return s.ret }

// noDevices is a machine with a driver but no GPU.
type noDevices struct {
	*dgxa100.Server
	shutdowns *int
}

func (noDevices) DeviceGetCount() (int, nvml.Return) { return 0, nvml.SUCCESS }
func (s noDevices) Shutdown() nvml.Return {
	*s.shutdowns++
	return nvml.SUCCESS
}

// panics is a library that panics, as go-nvml does in some paths.
type panics struct{ *dgxa100.Server }

func (panics) DeviceGetCount() (int, nvml.Return) { panic("symbol not loaded") }

func TestNVMLNoGPU(t *testing.T) {
	shutdowns := 0
	tests := []struct {
		name string
		lib  nvmlLib
		want string
	}{
		{"library not found", initFails{dgxa100.New(), nvml.ERROR_LIBRARY_NOT_FOUND}, "libnvidia-ml.so.1"},
		{"driver not loaded", initFails{dgxa100.New(), nvml.ERROR_DRIVER_NOT_LOADED}, "driver is not loaded"},
		{"other init error", initFails{dgxa100.New(), nvml.ERROR_UNKNOWN}, "NVML init"},
		{"no devices", noDevices{dgxa100.New(), &shutdowns}, "no GPUs"},
		{"panic", panics{dgxa100.New()}, "symbol not loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := openNVML(tt.lib, NVMLOptions{})
			if err == nil {
				p.Close()
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrNoGPU) {
				t.Errorf("%q does not wrap ErrNoGPU", err)
			}
			for _, s := range []string{tt.want, "--fake-gpus", "--no-gpu"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
	if shutdowns != 1 {
		t.Errorf("NVML shut down %d times after finding no devices, want 1", shutdowns)
	}
}

func TestNVMLClose(t *testing.T) {
	shutdowns := 0
	s := newServer(t)
	s.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
	p, err := openNVML(s, NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if shutdowns != 1 {
		t.Errorf("shut down %d times, want 1", shutdowns)
	}
	if _, err := p.Devices(); err == nil {
		t.Error("Devices after Close: no error")
	}
}

// TestOpenNVMLReal loads the real library: on a machine without one (CI) it must fail with
// ErrNoGPU rather than panic; on a GPU machine it must see at least one device.
func TestOpenNVMLReal(t *testing.T) {
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
	for _, d := range devs {
		t.Logf("%d %s %s total %s used %s free %s", d.Index, d.UUID, d.Name, size.Format(d.Total), size.Format(d.Used), size.Format(d.Free))
		if d.Total == 0 || d.Used+d.Free != d.Total {
			t.Errorf("device %d: memory %+v does not add up", d.Index, d)
		}
		if _, err := p.Processes(d.Index); err != nil {
			t.Errorf("processes: %v", err)
		}
	}
}

// TestNVMLProcessesLocal: a PID whose process here has an NVIDIA device open is one of this
// pid namespace's (named from procfs); one that names no such process is not.
func TestNVMLProcessesLocal(t *testing.T) {
	p, err := openNVML(newServer(t), NVMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	root := t.TempDir()
	for pid, target := range map[string]string{"4242": "/dev/nvidia1", "4343": "/tmp/unrelated"} {
		fd := filepath.Join(root, pid, "fd")
		if err := os.MkdirAll(fd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(fd, "3")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "comm"), []byte("python3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.(*nvmlProbe).proc = root
	procs, err := p.Processes(1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{{PID: 4242, Name: "python3", UsedMemory: gi, Local: true}, {PID: 4343}, {PID: 4444, UsedMemory: gi / 4}}
	if !slices.Equal(procs, want) {
		t.Errorf("processes = %+v, want %+v", procs, want)
	}
}
