package gpusim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/runall/runall/gpu"
)

// live lists the live claims on device index (those that hold memory and those that also
// compute now), with their loads.
func (p *probe) live(index int) ([]liveClaim, []Load, error) {
	if p.isClosed() {
		return nil, nil, errClosed
	}
	if index < 0 || index >= len(p.st.devs) {
		return nil, nil, fmt.Errorf("simulated GPUs: no gpu %d (%d simulated)", index, len(p.st.devs))
	}
	var cs []liveClaim
	err := p.st.locked(func() (err error) {
		cs, err = p.st.claims(index)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	cs = slices.DeleteFunc(cs, func(c liveClaim) bool { return c.lingering })
	loads := make([]Load, len(cs))
	for i, c := range cs {
		loads[i] = c.load
	}
	return cs, loads, nil
}

// Utilization implements gpu.Probe: the share of the time any kernel runs, as the model
// (compute.go) has it for what the processes on the device compute now. Memory traffic is
// not modelled: its share is 0.
func (p *probe) Utilization(index int) (gpu.Utilization, error) {
	_, loads, err := p.live(index)
	if err != nil {
		return gpu.Utilization{}, err
	}
	dev, _ := Utilization(loads, p.st.devs[index].MPS)
	return gpu.Utilization{GPU: dev}, nil
}

// ProcessUtilization implements gpu.Probe: each live process, with its share of the time its
// kernels run (0 for one that only holds memory, as a driver samples an idle context), under
// the PIDs Processes reports it by (none without PIDs).
func (p *probe) ProcessUtilization(index int) ([]gpu.ProcessUtilization, error) {
	cs, loads, err := p.live(index)
	if err != nil {
		return nil, err
	}
	out := []gpu.ProcessUtilization{}
	if p.pids == PIDsNone {
		return out, nil
	}
	_, shares := Utilization(loads, p.st.devs[index].MPS)
	for i, c := range cs {
		pid := c.pid
		if p.pids == PIDsHost {
			pid += hostPIDOffset
		}
		out = append(out, gpu.ProcessUtilization{PID: pid, SM: shares[i]})
	}
	slices.SortFunc(out, func(a, b gpu.ProcessUtilization) int { return cmp.Compare(a.PID, b.PID) })
	return out, nil
}
