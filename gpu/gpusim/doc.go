// Package gpusim simulates GPUs for runall's tests, demos and `check --simulate`: devices
// with memory that `runall fake-alloc` processes claim as training processes do, and a
// gpu.Probe that measures them as NVML measures real ones. Every process of a run shares
// their state through a directory (see state.go).
package gpusim

import "strings"

// Names of the environment variables that carry simulated GPUs to the processes of a run.
const (
	EnvGPUs     = "RUNALL_FAKE_GPUS"      // the spec of the simulated GPUs, e.g. 32GiB,16GiB
	EnvState    = "RUNALL_FAKE_GPU_STATE" // the directory holding their claims
	EnvHostPIDs = "RUNALL_FAKE_HOST_PIDS" // 1: they report host PIDs; none: no processes
)

// splitList splits a CUDA_VISIBLE_DEVICES value at its commas, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
