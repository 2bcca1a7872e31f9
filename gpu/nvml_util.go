//go:build cgo

package gpu

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Utilization implements Probe.
func (p *nvmlProbe) Utilization(index int) (Utilization, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	g, err := p.gpu(index)
	if err != nil {
		return Utilization{}, err
	}
	u, ret := g.dev.GetUtilizationRates()
	if ret != nvml.SUCCESS {
		return Utilization{}, fmt.Errorf("nvml: gpu %d (%s): utilization: %w", index, g.uuid, ret)
	}
	return Utilization{GPU: u.Gpu, Memory: u.Memory}, nil
}

// utilWindow is how far back ProcessUtilization asks the driver for samples: a few of its
// sample periods (1/6 s to 1 s, by product).
const utilWindow = 2 * time.Second

// ProcessUtilization implements Probe: each process's latest sample of the last utilWindow.
func (p *nvmlProbe) ProcessUtilization(index int) ([]ProcessUtilization, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	g, err := p.gpu(index)
	if err != nil {
		return nil, err
	}
	samples, ret := g.dev.GetProcessUtilization(uint64(time.Now().Add(-utilWindow).UnixMicro()))
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_FOUND: // no process ran a kernel since then
		return []ProcessUtilization{}, nil
	default:
		return nil, fmt.Errorf("nvml: gpu %d (%s): process utilization: %w", index, g.uuid, ret)
	}
	latest := map[uint32]nvml.ProcessUtilizationSample{}
	for _, s := range samples {
		if l, ok := latest[s.Pid]; !ok || s.TimeStamp > l.TimeStamp {
			latest[s.Pid] = s
		}
	}
	out := make([]ProcessUtilization, 0, len(latest))
	for _, s := range latest {
		out = append(out, ProcessUtilization{PID: s.Pid, SM: s.SmUtil, Memory: s.MemUtil})
	}
	slices.SortFunc(out, func(a, b ProcessUtilization) int { return cmp.Compare(a.PID, b.PID) })
	return out, nil
}
