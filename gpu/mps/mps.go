// Package mps runs NVIDIA's Multi-Process Service for the GPUs runall places trials on: one
// control daemon per GPU (each seeing only its GPU, with its own pipe and log directories),
// or a node's daemon when one answers at CUDA_MPS_PIPE_DIRECTORY; the environment that makes a
// trial one of its clients, capped in memory; and what the daemons' logs say of faults.
// Beside each daemon of its own it writes a record (daemon.json, find.go), by which Find
// tells `runall gpus` whose daemon serves each GPU now. It knows nothing of tasks: runall's
// GPU room asks it (runner/isolation.go).
//
// The commands, variables and log lines used are NVIDIA's, from the MPS documentation
// (https://docs.nvidia.com/deploy/mps/): "Appendix: Tools and Interface Reference" for
// nvidia-cuda-mps-control -d, get_server_list and quit, the pid file in the pipe directory,
// CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; "MPS Logging Format" for control.log and server.log.
package mps

import (
	"errors"
	"fmt"
	"strings"
)

// Binary is the MPS control program, looked up on PATH.
const Binary = "nvidia-cuda-mps-control"

// Names of the MPS variables runall reads and sets.
const (
	EnvPipe    = "CUDA_MPS_PIPE_DIRECTORY"
	EnvLog     = "CUDA_MPS_LOG_DIRECTORY"
	EnvLimit   = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
	EnvThreads = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
	EnvVisible = "CUDA_VISIBLE_DEVICES"
)

// PIDFile is the file in the pipe directory that holds the control daemon's PID.
const PIDFile = "nvidia-cuda-mps-control.pid"

// Mode is how MPS is asked for: the task file's gpu-isolation (its grammar owns the values,
// runner/taskfile's Isolation), as ParseMode reads it.
type Mode string

// The modes: no MPS (today's behaviour), MPS or a clear error, MPS where it can be had.
const (
	None Mode = "none"
	On   Mode = "mps"
	Auto Mode = "auto"
)

// ParseMode reads a gpu-isolation value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case None, On, Auto:
		return m, nil
	case "":
		return None, nil
	}
	return "", fmt.Errorf("gpu-isolation %q: want mps, auto or none", s)
}

// ErrUnavailable is wrapped by Open's error when gpu-isolation: mps cannot have MPS.
var ErrUnavailable = errors.New("MPS cannot be had here")

// FormatLimit writes one device's pinned memory limit as NVIDIA's documentation writes it
// ("0=1G,1=512MB"): whole GiB as G, else MB, rounded up so that the cap never falls below
// what was admitted.
func FormatLimit(index int, bytes uint64) string {
	mib := (bytes + 1<<20 - 1) >> 20
	if mib%1024 == 0 && mib > 0 {
		return fmt.Sprintf("%d=%dG", index, mib/1024)
	}
	return fmt.Sprintf("%d=%dMB", index, mib)
}

// ParseLimit reads CUDA_MPS_PINNED_DEVICE_MEM_LIMIT ("0=1G,1=512MB") into bytes by the index
// the client sees.
func ParseLimit(s string) (map[int]uint64, error) {
	out := map[int]uint64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		idx, val, ok := strings.Cut(part, "=")
		var i int
		var n uint64
		var unit string
		if _, err := fmt.Sscanf(idx, "%d", &i); err != nil || !ok || i < 0 {
			return nil, fmt.Errorf("%s=%q: %q: want DEVICE=SIZE, e.g. 0=2G", EnvLimit, s, part)
		}
		if _, err := fmt.Sscanf(val, "%d%s", &n, &unit); err != nil {
			return nil, fmt.Errorf("%s=%q: %q: want a size such as 2G or 512MB", EnvLimit, s, val)
		}
		mult, known := map[string]uint64{"G": 1 << 30, "GB": 1 << 30, "M": 1 << 20, "MB": 1 << 20, "K": 1 << 10, "KB": 1 << 10}[strings.ToUpper(unit)]
		if !known {
			return nil, fmt.Errorf("%s=%q: unit %q: want G, MB or KB", EnvLimit, s, unit)
		}
		out[i] = n * mult
	}
	return out, nil
}
