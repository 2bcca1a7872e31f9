package gpusim

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/procfs"
)

// probe is a gpu.Probe over simulated GPUs; every measurement reads the shared state.
type probe struct {
	st   *state
	pids PIDs
	proc string // procfs root, to tell a claimant of this pid namespace

	mu     sync.Mutex
	closed bool
}

// Open returns a gpu.Probe over simulated GPUs whose memory is claimed by `runall
// fake-alloc` processes sharing opts.StateDir (created if missing).
func Open(opts Options) (gpu.Probe, error) {
	st, err := openState(opts.StateDir, opts.Devices)
	if err != nil {
		return nil, err
	}
	return &probe{st: st, pids: opts.PIDs, proc: "/proc"}, nil
}

func (p *probe) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Devices implements gpu.Probe.
func (p *probe) Devices() ([]gpu.Device, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	out := make([]gpu.Device, len(p.st.devs))
	err := p.st.locked(func() error {
		for i, d := range p.st.devs {
			used, err := p.st.used(i, "")
			if err != nil {
				return err
			}
			free := uint64(0)
			if used < d.Total { // a state dir reused with smaller sizes can hold more
				free = d.Total - used
			}
			out[i] = gpu.Device{Index: i, UUID: p.st.uuid(i), Name: deviceName, Total: d.Total, Used: used, Free: free}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	return out, nil
}

// foreignPID is the pid the foreign process on device i reports: beyond every claimant's,
// host PIDs included, so that it is never taken for one of them.
func foreignPID(i int) uint32 { return 2*hostPIDOffset + uint32(i) }

// Processes implements gpu.Probe: one "fake-alloc" process per live claim, and the foreign
// process where the device has one. Lingering memory belongs to processes that have ended:
// the driver counts it, but lists no process for it.
func (p *probe) Processes(index int) ([]gpu.Process, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	if index < 0 || index >= len(p.st.devs) {
		return nil, fmt.Errorf("simulated GPUs: no gpu %d (%d simulated)", index, len(p.st.devs))
	}
	var cs []liveClaim
	err := p.st.locked(func() (err error) {
		cs, err = p.st.claims(index)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	out := make([]gpu.Process, 0, len(cs)+1)
	if p.pids == PIDsNone {
		return out, nil
	}
	if f := p.st.devs[index].Foreign; f > 0 {
		out = append(out, gpu.Process{PID: foreignPID(index), UsedMemory: f})
	}
	for _, c := range cs {
		switch {
		case c.lingering:
			continue
		case p.pids == PIDsHost:
			out = append(out, gpu.Process{PID: c.pid + hostPIDOffset, UsedMemory: c.size})
		default:
			// A claimant holds its claim file open, as a CUDA process holds /dev/nvidia*.
			local := procfs.HoldsOpen(p.proc, c.pid, filepath.Join(p.st.dir, p.st.uuid(index)))
			out = append(out, gpu.Process{PID: c.pid, Name: procName, UsedMemory: c.size, Local: local})
		}
	}
	slices.SortFunc(out, func(a, b gpu.Process) int { return cmp.Compare(a.PID, b.PID) })
	return out, nil
}

// Env implements gpu.Probe: the UUIDs, and where fake-alloc finds the devices and their claims.
func (p *probe) Env(indices []int) []string {
	uuids := make([]string, 0, len(indices))
	for _, i := range indices {
		if i >= 0 && i < len(p.st.devs) {
			uuids = append(uuids, p.st.uuid(i))
		}
	}
	return []string{
		gpu.EnvCUDAVisibleDevices + "=" + strings.Join(uuids, ","),
		gpu.EnvCUDADeviceOrder + "=PCI_BUS_ID", // as on real GPUs, so trials see the same either way
		EnvGPUs + "=" + FormatSpec(p.st.devs),
		EnvState + "=" + p.st.dir,
	}
}

// Close implements gpu.Probe. Claims belong to their processes, so there is nothing to release.
func (p *probe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}
