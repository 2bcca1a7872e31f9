package gpusim

// How simulated GPUs share compute between the processes that train on them (docs/gpu.md,
// "How simulated GPUs share compute", gives the model's sources).
//
// A process's step takes Step alone, of which the share Busy is the GPU computing (its
// kernels) and the rest input, Python and the host. Without MPS the GPU runs one process's
// kernels at a time (time-slicing): each process beyond the first adds SwitchCost to the
// demand of the busy shares (context switches, caches and TLBs refilled, kernels
// preempted); while that fits in the GPU's time the processes compute in each other's gaps
// and no step is slower, past that every step stretches in proportion. With MPS
// the processes' kernels run at once in one context, each filling the share SM of the
// device's SMs while it runs: steps stretch only once those SM-weighted shares add up to more
// than the device, and there is no switching cost.

// SwitchCost is what each process beyond the first adds to the steps of every process on a
// time-sliced GPU whose demand exceeds it: pairs of busy jobs were published 19-30% slower
// each than their fair share (docs/gpu.md).
const SwitchCost = 0.25

// Load is one process computing on a device.
type Load struct {
	Busy float64 // the share of its step alone that the GPU computes, in (0, 1]
	SM   float64 // the share of the SMs its kernels fill while they run, in (0, 1] (MPS)
}

// Stretch is how many times longer each step of the processes with the given loads takes on
// one device than alone: 1 while they fit beside each other, more once they contend.
func Stretch(loads []Load, mps bool) float64 {
	demand, n := 0.0, 0
	for _, l := range loads {
		if l.Busy <= 0 {
			continue // holds memory, computes nothing now
		}
		n++
		if mps {
			demand += l.Busy * smShare(l.SM)
		} else {
			demand += l.Busy
		}
	}
	if !mps && n > 1 {
		demand *= 1 + SwitchCost*float64(n-1)
	}
	return max(1, demand)
}

// smShare is an SM share with its zero value meaning the whole device.
func smShare(sm float64) float64 {
	if sm <= 0 || sm > 1 {
		return 1
	}
	return sm
}

// Utilization is what NVML would report of processes with the given loads on one device, in
// percent: each process's share of the time its kernels run (nvmlDeviceGetProcessUtilization's
// smUtil), and the device's share of the time any kernel runs (nvmlDeviceGetUtilizationRates's
// gpu). Time lost to switching between contexts runs no kernel; under MPS kernels of several
// processes run at once, and the device is busy while any runs.
func Utilization(loads []Load, mps bool) (device uint32, procs []uint32) {
	s := Stretch(loads, mps)
	sum := 0.0
	procs = make([]uint32, len(loads))
	for i, l := range loads {
		if l.Busy <= 0 {
			continue
		}
		share := l.Busy / s
		procs[i] = percent(share)
		sum += share
	}
	return percent(min(1, sum)), procs
}

func percent(f float64) uint32 { return uint32(f*100 + 0.5) }
