package results

import "time"

// GPU is one GPU's health as the run watched it: each fault it saw there, when, and what
// runall did about it.
type GPU struct {
	GPU int `json:"gpu"` // the GPU's index
	// Health is "ok" (no fault seen), "faults recorded" (only faults of an application's,
	// which leave it in service) or "out of service" (no trial placed on it after).
	Health string     `json:"health"`
	Faults []GPUFault `json:"faults,omitempty"`
}

// The GPU's health, as GPU.Health says it.
const (
	GPUHealthOK           = "ok"
	GPUHealthRecorded     = "faults recorded"
	GPUHealthOutOfService = "out of service"
)

// GPUFault is one fault the run saw on a GPU.
type GPUFault struct {
	Fault      string    `json:"fault"`         // as said: "xid 79 (GPU has fallen off the bus)"
	Kind       string    `json:"kind"`          // xid, pending-retirement, remap-failure, ecc, lost
	Xid        uint64    `json:"xid,omitempty"` // the Xid, for kind xid
	Resolution string    `json:"resolution"`    // NVIDIA's: restart the application, reset the GPU, contact support
	Seen       time.Time `json:"seen"`          // when runall's health read saw it
	// Action is what runall did: "out of service" (its trials went on elsewhere) or
	// "recorded" (an application's fault: nothing more).
	Action string `json:"action"`
}
