package gpu

import (
	"fmt"
	"strings"
	"time"
)

// Health is what the driver says of a device's faults at one moment. The zero value is a
// device of which nothing bad is known: a state the driver does not report (NOT_SUPPORTED)
// is no data, never a fault.
type Health struct {
	// Xids are the critical Xid errors the driver reported for the device since the probe
	// began watching it (its first Health read), oldest first.
	Xids []XidEvent
	// XidsWatched is false where the driver delivers no Xid events for the device: only the
	// states below are seen there.
	XidsWatched bool
	// PendingRetirement: pages wait to be retired at the next reset or driver reload
	// (nvmlDeviceGetRetiredPagesPendingStatus).
	PendingRetirement bool
	// RemapFailed: a row remapping failed (nvmlDeviceGetRemappedRows).
	RemapFailed bool
	// UncorrectedECC is the count of uncorrectable ECC errors since the driver loaded
	// (volatile: a reset clears it).
	UncorrectedECC uint64
	// Lost: the driver answers that the GPU is lost (NVML_ERROR_GPU_IS_LOST), as after it
	// fell off the bus.
	Lost bool
}

// XidEvent is one Xid error the driver reported, with when runall saw it.
type XidEvent struct {
	Xid uint64
	At  time.Time
}

// FaultKind names what a fault is.
type FaultKind string

// The faults a health read can show.
const (
	FaultXid               FaultKind = "xid"
	FaultPendingRetirement FaultKind = "pending-retirement"
	FaultRemapFailure      FaultKind = "remap-failure"
	FaultECC               FaultKind = "ecc"
	FaultLost              FaultKind = "lost"
)

// Fault is one thing wrong with a device.
type Fault struct {
	Kind  FaultKind
	Xid   uint64    // the Xid, for FaultXid
	Count uint64    // the uncorrectable errors, for FaultECC
	At    time.Time // when it was seen; zero for a state read by a poll
}

// Faults lists what is wrong with the device, Xids first in the order they came.
func (h Health) Faults() []Fault {
	var out []Fault
	for _, x := range h.Xids {
		out = append(out, Fault{Kind: FaultXid, Xid: x.Xid, At: x.At})
	}
	if h.Lost {
		out = append(out, Fault{Kind: FaultLost})
	}
	if h.PendingRetirement {
		out = append(out, Fault{Kind: FaultPendingRetirement})
	}
	if h.RemapFailed {
		out = append(out, Fault{Kind: FaultRemapFailure})
	}
	if h.UncorrectedECC > 0 {
		out = append(out, Fault{Kind: FaultECC, Count: h.UncorrectedECC})
	}
	return out
}

// OutOfService is the first fault that takes the device out of service, if any.
func (h Health) OutOfService() (Fault, bool) {
	for _, f := range h.Faults() {
		if f.OutOfService() {
			return f, true
		}
	}
	return Fault{}, false
}

// String is "ok", or the faults: "xid 79 (GPU has fallen off the bus)".
func (h Health) String() string {
	fs := h.Faults()
	if len(fs) == 0 {
		return "ok"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

// String names the fault as the output and `runall gpus` show it.
func (f Fault) String() string {
	switch f.Kind {
	case FaultXid:
		if x, ok := xidTable[f.Xid]; ok {
			return fmt.Sprintf("xid %d (%s)", f.Xid, x.what)
		}
		return fmt.Sprintf("xid %d", f.Xid)
	case FaultECC:
		return fmt.Sprintf("%d uncorrectable ECC error(s)", f.Count)
	case FaultPendingRetirement:
		return "pages pending retirement"
	case FaultRemapFailure:
		return "row remapping failed"
	case FaultLost:
		return "GPU lost"
	}
	return string(f.Kind)
}
