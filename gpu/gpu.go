// Package gpu reports the GPUs runall may place trials on: their memory and the compute
// processes on them, through the small Probe interface. It holds the NVML implementation;
// the simulated one is gpu/gpusim. It knows nothing about tasks.
package gpu

import "errors"

var errClosed = errors.New("gpu: probe is closed")

// Device is one GPU as seen at one moment.
type Device struct {
	Index int    // index among the devices visible to runall (after CUDA_VISIBLE_DEVICES)
	UUID  string // e.g. GPU-5f0c...; what a trial's CUDA_VISIBLE_DEVICES names
	Name  string // e.g. "Tesla V100-SXM2-32GB"
	Total uint64 // bytes
	Used  uint64 // bytes, by anything on the device
	Free  uint64 // bytes
}

// Process is a process the driver reports on a device, with the memory it holds there.
type Process struct {
	PID        uint32
	Name       string // best effort; empty when unknown
	UsedMemory uint64 // bytes
	// Local is set when PID names a process of this pid namespace that has the device open:
	// runall can then tell its trials' processes by their PIDs. Inside a container, older
	// drivers report the host's PIDs, which name no process here, or another one.
	Local bool
}

// Probe measures devices. Implementations are safe for concurrent use.
type Probe interface {
	// Devices returns a fresh measurement of every visible device, in index order.
	Devices() ([]Device, error)
	// Processes returns the compute processes on the device with the given index.
	Processes(index int) ([]Process, error)
	// Env returns the variables a trial placed on the given devices needs so that CUDA and
	// the probe agree on what it runs on (CUDA_VISIBLE_DEVICES, and for simulated GPUs the
	// state fake-alloc reads).
	Env(indices []int) []string
	// Utilization returns how busy the device with the given index was lately, as NVML's
	// nvmlDeviceGetUtilizationRates reports it.
	Utilization(index int) (Utilization, error)
	// ProcessUtilization returns the share of the device each process that ran kernels on it
	// lately had, as NVML's nvmlDeviceGetProcessUtilization reports it; a process that ran
	// none is listed at 0 or not at all, as drivers differ.
	ProcessUtilization(index int) ([]ProcessUtilization, error)
	// Health reports the device's faults: the critical Xids seen since the probe's first
	// Health read, pages pending retirement, a failed row remapping, uncorrectable ECC
	// errors. A read never blocks; a state the device does not report is no data.
	Health(index int) (Health, error)
	// Close releases the library or state behind the probe.
	Close() error
}

// Utilization is a device's use over the driver's last sample period, in percent.
type Utilization struct {
	GPU    uint32 // of the time one or more kernels ran
	Memory uint32 // of the time device memory was read or written
}

// ProcessUtilization is one process's use of a device over the driver's last sample period,
// in percent of the time.
type ProcessUtilization struct {
	PID    uint32
	SM     uint32 // its kernels ran on the SMs
	Memory uint32 // it read or wrote device memory
}
