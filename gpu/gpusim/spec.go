package gpusim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/size"
)

// PIDs is how simulated GPUs report the processes that claim their memory: as NVML does
// where it shares runall's pid namespace (recent drivers, VMs, bare metal, hostPID Pods), or
// as an older driver inside a container does.
type PIDs int

const (
	PIDsLocal PIDs = iota // each claimant's own PID
	PIDsHost              // numbers that name no process here, as the host's PIDs seen from a container
	PIDsNone              // no processes at all: memory figures only
)

// hostPIDOffset turns a PID into one no pid namespace here can have: PID_MAX_LIMIT on
// 64-bit Linux. The same claimant always gets the same number, as a host PID would be.
const hostPIDOffset = 1 << 22

// ParsePIDs reads RUNALL_FAKE_HOST_PIDS: empty or "0" for local PIDs, "1" for host PIDs,
// "none" for no processes.
func ParsePIDs(s string) (PIDs, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false":
		return PIDsLocal, nil
	case "1", "true":
		return PIDsHost, nil
	case "none":
		return PIDsNone, nil
	}
	return 0, fmt.Errorf("%s=%q: want 1 (report host PIDs, as a container on an older driver sees them), none (report no processes) or 0", EnvHostPIDs, s)
}

// ErrOutOfMemory is wrapped by Alloc's error when a claim does not fit on its device.
var ErrOutOfMemory = errors.New("simulated GPU out of memory")

var errClosed = errors.New("gpu: probe is closed")

const (
	deviceName    = "Simulated GPU"
	procName      = "fake-alloc"
	stateLockName = "lock"
	stateIDName   = "id"
)

// Device is one simulated GPU: its memory, the share of it the driver keeps (used, but
// held by no process), and what another user's process holds on it from the start.
type Device struct {
	Total   uint64 // bytes
	Reserve uint64 // counted as used, by no process: the driver's own share
	Foreign uint64 // held by a process that is none of runall's (another container's)
	// MPS runs the kernels of its processes at once, in one context, as NVIDIA's
	// Multi-Process Service does, instead of time-slicing between them (compute.go).
	MPS bool
}

// ParseSpec reads a list of simulated GPUs such as "32GiB,32GiB" or "4x16GiB,8GiB",
// each optionally followed by ":reserve=SIZE" (memory no process holds),
// ":foreign=SIZE" (held by another user's process) and ":mps" (MPS on):
// "2x80GiB:reserve=512MiB:mps". Faults (":xid=79@30s") are checked here and read by
// ParseFaults.
func ParseSpec(spec string) ([]Device, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("empty simulated GPU spec: want sizes such as 32GiB,16GiB or 4x16GiB")
	}
	var devs []Device
	for i, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d is empty: want sizes such as 32GiB,16GiB", spec, i+1)
		}
		f, opts, _ := strings.Cut(f, ":")
		count := 1
		if n, rest, ok := strings.Cut(f, "x"); ok {
			c, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil || c < 1 || c > 1024 {
				return nil, fmt.Errorf("simulated GPU spec %q: %q: want COUNTxSIZE with COUNT from 1 to 1024, such as 4x16GiB", spec, f)
			}
			count, f = c, strings.TrimSpace(rest)
		}
		total, err := size.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("simulated GPU spec %q: %w", spec, err)
		}
		if total == 0 {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d has no memory", spec, i+1)
		}
		d := Device{Total: total}
		if err := d.parseOptions(opts); err != nil {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d: %w", spec, i+1, err)
		}
		for range count {
			devs = append(devs, d)
		}
	}
	return devs, nil
}

// parseOptions reads "reserve=SIZE:foreign=SIZE:mps" (any of them, or none).
func (d *Device) parseOptions(opts string) error {
	if opts == "" {
		return nil
	}
	for _, o := range strings.Split(opts, ":") {
		if strings.TrimSpace(o) == "mps" {
			d.MPS = true
			continue
		}
		if _, ok, err := parseInjection(o); ok { // a fault (faults.go): ParseFaults reads it
			if err != nil {
				return err
			}
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
		if !ok || (k != "reserve" && k != "foreign") {
			return fmt.Errorf("%q: want reserve=SIZE, foreign=SIZE or mps after the size, such as 80GiB:reserve=512MiB:foreign=4GiB:mps, or a fault: xid=N@T, pending-retirement@T or ecc@T", o)
		}
		n, err := size.Parse(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if k == "reserve" {
			d.Reserve = n
		} else {
			d.Foreign = n
		}
	}
	if d.Reserve+d.Foreign > d.Total {
		return fmt.Errorf("reserve and foreign memory (%s) exceed the device's %s", size.Format(d.Reserve+d.Foreign), size.Format(d.Total))
	}
	return nil
}

// FormatSpec writes devices back as a spec ParseSpec reads exactly.
func FormatSpec(devs []Device) string {
	parts := make([]string, len(devs))
	for i, d := range devs {
		parts[i] = exactSize(d.Total)
		if d.Reserve > 0 {
			parts[i] += ":reserve=" + exactSize(d.Reserve)
		}
		if d.Foreign > 0 {
			parts[i] += ":foreign=" + exactSize(d.Foreign)
		}
		if d.MPS {
			parts[i] += ":mps"
		}
	}
	return strings.Join(parts, ",")
}

// exactSize writes a size that ParseSize reads back to the byte.
func exactSize(s uint64) string {
	switch {
	case s%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", s>>30)
	case s%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", s>>20)
	}
	return strconv.FormatUint(s, 10)
}

// DefaultStateDir is where simulated GPUs keep their claims when RUNALL_FAKE_GPU_STATE
// is unset: one directory per user under tmpDir, so concurrent runs see each other's claims
