// Package gpusim simulates GPUs for runall's tests, demos and `check --simulate`: devices
// with memory that `runall fake-alloc` processes claim as training processes do, and a
// gpu.Probe that measures them as NVML measures real ones (probe.go). Every process of a
// run shares their state through a directory (see state.go). Beside memory it models how the
// processes that train on a GPU share its compute (compute.go, train.go: what check
// --simulate --busy predicts with, through simulate.Compute (runner/simulate), and what fake-alloc's
// --train-steps run), and an MPS control daemon and server (mpsd.go, mpsclient.go), reached
// as runall under the name nvidia-cuda-mps-control (cmd/runall/fakemps.go). It imports gpu;
// gpu never imports it.
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
