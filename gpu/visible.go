package gpu

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names of the environment variables runall reads and sets for GPUs.
const (
	EnvCUDAVisibleDevices   = "CUDA_VISIBLE_DEVICES"
	EnvNVIDIAVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
	EnvCUDADeviceOrder      = "CUDA_DEVICE_ORDER"
)

// ErrNoGPU is wrapped by every error that means "there is no usable NVIDIA GPU here": no
// library, no driver, no device, or all of them hidden by the visibility variables.
var ErrNoGPU = errors.New("no NVIDIA GPU")

// noGPUHint ends every ErrNoGPU message with what the user can do instead.
const noGPUHint = "use --fake-gpus to simulate or --no-gpu to run without GPU admission"

// NVMLOptions carries runall's own visibility variables into OpenNVML, which reads no
// environment itself.
type NVMLOptions struct {
	// CUDAVisibleDevices is runall's CUDA_VISIBLE_DEVICES. CUDAVisibleDevicesSet tells an
	// empty value, which hides every GPU as it does for CUDA, from an unset one (all GPUs).
	CUDAVisibleDevices    string
	CUDAVisibleDevicesSet bool
	// NVIDIAVisibleDevices is runall's NVIDIA_VISIBLE_DEVICES (the container toolkit's);
	// empty means unset: all GPUs NVML enumerates.
	NVIDIAVisibleDevices string
}

// visibleDevices picks, from the UUIDs of the devices NVML enumerates (in NVML's PCI bus
// order), the indices runall may use, in the order CUDA would number them. The
// container-level NVIDIA_VISIBLE_DEVICES applies first; CUDA_VISIBLE_DEVICES indices then
// count among what it left.
func visibleDevices(uuids []string, opts NVMLOptions) ([]int, error) {
	all := make([]int, len(uuids))
	for i := range all {
		all[i] = i
	}
	vis, err := applyNVIDIAVisible(uuids, all, opts.NVIDIAVisibleDevices)
	if err != nil {
		return nil, err
	}
	if opts.CUDAVisibleDevicesSet {
		if vis, err = applyCUDAVisible(uuids, vis, opts.CUDAVisibleDevices); err != nil {
			return nil, err
		}
	}
	if len(vis) == 0 {
		return nil, fmt.Errorf("%w: %s hide all %d GPUs NVML reports (unset them to use the GPUs); %s",
			ErrNoGPU, describeVisible(opts), len(uuids), noGPUHint)
	}
	return vis, nil
}

func describeVisible(opts NVMLOptions) string {
	var parts []string
	if opts.NVIDIAVisibleDevices != "" {
		parts = append(parts, fmt.Sprintf("%s=%q", EnvNVIDIAVisibleDevices, opts.NVIDIAVisibleDevices))
	}
	if opts.CUDAVisibleDevicesSet {
		parts = append(parts, fmt.Sprintf("%s=%q", EnvCUDAVisibleDevices, opts.CUDAVisibleDevices))
	}
	return strings.Join(parts, " and ")
}

// applyNVIDIAVisible filters by the container toolkit's variable. The runtime has usually
// applied it already (NVML in the container sees only those devices, renumbered from 0), so
// host indices are used only when NVML sees more devices than the list names, as in a
// privileged container or on the host itself; UUIDs are always safe to match.
func applyNVIDIAVisible(uuids []string, cand []int, val string) ([]int, error) {
	val = strings.TrimSpace(val)
	switch strings.ToLower(val) {
	case "", "all":
		return cand, nil
	case "none", "void":
		return nil, nil
	}
	entries := splitList(val)
	allIndices := true
	for _, e := range entries {
		if _, err := strconv.Atoi(e); err != nil {
			allIndices = false
		}
	}
	if allIndices && len(cand) <= len(entries) {
		return cand, nil
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		i, err := resolveEntry(uuids, cand, e)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", EnvNVIDIAVisibleDevices, val, err)
		}
		if i < 0 {
			continue // a stop marker such as -1 means nothing here; the runtime decides
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s=%q: %q is listed twice", EnvNVIDIAVisibleDevices, val, e)
		}
		out = append(out, i)
	}
	return out, nil
}

// applyCUDAVisible follows CUDA: entries are indices into the devices left so far, or UUIDs
// (or a unique UUID prefix); the list ends at a negative index, which is how "-1" hides all.
// Unlike CUDA, which silently drops everything from an unknown entry on, runall refuses an
// index or UUID that names no device, so a typo does not quietly shrink the GPU pool.
func applyCUDAVisible(uuids []string, cand []int, val string) ([]int, error) {
	val = strings.TrimSpace(val)
	switch strings.ToLower(val) {
	case "all":
		return cand, nil
	case "", "none", "void", "nodevfiles": // NoDevFiles is what Slurm sets for "no GPUs"
		return nil, nil
	}
	var out []int
	for _, e := range splitList(val) {
		i, err := resolveEntry(uuids, cand, e)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", EnvCUDAVisibleDevices, val, err)
		}
		if i < 0 {
			break
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s=%q: %q is listed twice", EnvCUDAVisibleDevices, val, e)
		}
		out = append(out, i)
	}
	return out, nil
}

// resolveEntry returns the NVML index an entry names among cand, or -1 for a negative index.
func resolveEntry(uuids []string, cand []int, e string) (int, error) {
	if n, err := strconv.Atoi(e); err == nil {
		if n < 0 {
			return -1, nil
		}
		if n >= len(cand) {
			return 0, fmt.Errorf("no GPU with index %d (%d visible)", n, len(cand))
		}
		return cand[n], nil
	}
	if strings.HasPrefix(e, "MIG-") {
		return 0, fmt.Errorf("%q is a MIG device; runall places trials on whole GPUs only", e)
	}
	found := -1
	for _, i := range cand {
		if uuids[i] == e {
			return i, nil
		}
		if strings.HasPrefix(uuids[i], e) {
			if found >= 0 {
				return 0, fmt.Errorf("%q matches more than one GPU UUID", e)
			}
			found = i
		}
	}
	if found < 0 || !strings.HasPrefix(e, "GPU-") {
		return 0, fmt.Errorf("no GPU with UUID %q (see runall gpus)", e)
	}
	return found, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
