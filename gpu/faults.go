package gpu

// The one table of the faults runall acts on. docs/gpu.md ("Which faults runall acts on
// and why") explains it, with NVIDIA's sources for each row and what could not be checked.

// Resolution is what NVIDIA's Xid catalog says to do about a fault (its "resolution
// bucket", immediate action), in increasing order of how much it takes.
type Resolution int

// The resolution buckets, least first.
const (
	ResolutionUnknown Resolution = iota // not a fault runall knows: recorded, nothing more
	RestartApp                          // the application that hit it fails; the GPU is fine
	ResetGPU                            // the GPU needs a reset before it can be trusted again
	ContactSupport                      // the GPU or its node needs servicing
)

func (r Resolution) String() string {
	switch r {
	case RestartApp:
		return "restart the application"
	case ResetGPU:
		return "reset the GPU"
	case ContactSupport:
		return "contact support"
	}
	return "unknown"
}

// Kills says which processes on a GPU a fault ends.
type Kills int

// What a fault does to the processes on its GPU.
const (
	KillsNone    Kills = iota // none that runall can name (an application Xid ends its own)
	KillsRunning              // those on the GPU when it happened
	KillsAll                  // those on it then and any that start on it later
)

// xid is one row of the table: what the driver's Xid means and what it takes.
type xid struct {
	what       string // NVIDIA's short description
	resolution Resolution
	memory     bool  // a memory error: what ran on the GPU may have read bad data
	kills      Kills // the processes it ends
}

// xidTable holds the Xids runall knows. An Xid not listed is recorded on its GPU and
// nothing more. Only Xid 13's bucket has been checked against NVIDIA's Xid catalog
// (RESTART_APP, as here); the others are still to be checked (docs/gpu.md, source 4).
var xidTable = map[uint64]xid{
	13:  {what: "Graphics Engine Exception", resolution: RestartApp},
	31:  {what: "GPU memory page fault", resolution: RestartApp},
	43:  {what: "GPU stopped processing", resolution: RestartApp},
	48:  {what: "double bit ECC error", resolution: ResetGPU, memory: true, kills: KillsRunning},
	63:  {what: "page retirement or row remapping recorded", resolution: ResetGPU},
	64:  {what: "page retirement or row remapping failed", resolution: ContactSupport},
	79:  {what: "GPU has fallen off the bus", resolution: ContactSupport, kills: KillsAll},
	94:  {what: "contained ECC error", resolution: ResetGPU, memory: true, kills: KillsRunning},
	95:  {what: "uncontained ECC error", resolution: ResetGPU, memory: true, kills: KillsRunning},
	119: {what: "GSP RPC timeout", resolution: ResetGPU},
	120: {what: "GSP error", resolution: ResetGPU},
}

// stateFaults are the faults read by a poll rather than reported as an Xid.
var stateFaults = map[FaultKind]xid{
	FaultLost:              {what: "GPU lost", resolution: ContactSupport, kills: KillsAll},
	FaultPendingRetirement: {what: "pages pending retirement", resolution: ResetGPU},
	FaultRemapFailure:      {what: "row remapping failed", resolution: ContactSupport},
	FaultECC:               {what: "uncorrectable ECC error", resolution: ResetGPU, memory: true, kills: KillsRunning},
}

func (f Fault) row() xid {
	if f.Kind == FaultXid {
		return xidTable[f.Xid]
	}
	return stateFaults[f.Kind]
}

// Resolution is NVIDIA's resolution bucket for the fault.
func (f Fault) Resolution() Resolution { return f.row().resolution }

// OutOfService says whether the fault takes its GPU out of service: its resolution is more
// than restarting the application.
func (f Fault) OutOfService() bool { return f.row().resolution > RestartApp }

// MemoryError says whether the fault is an uncorrectable memory error (Xid 48, 94, 95, an
// uncorrectable ECC count): the trials on the GPU are stopped at once, and nothing they
// wrote after it is trusted.
func (f Fault) MemoryError() bool { return f.row().memory }

// Kills says which processes on the GPU the fault ends.
func (f Fault) Kills() Kills { return f.row().kills }
