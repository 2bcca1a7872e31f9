package results

// Sharing is what gpu-sharing: progress measured (the controller, runner/sharing, fills it:
// this record imports no controller): per trial its rate alone, its rate shared and its
// slowdown; per GPU its number of trials over time; every decision as the output said it;
// and what sharing bought, as the summary says it.
type Sharing struct {
	Trials    []SharingTrial    `json:"trials"`
	GPUs      []SharingGPU      `json:"gpus"`
	Decisions []SharingDecision `json:"decisions,omitempty"`
	// Speedup is the time the trials would have taken one at a time (each one's steps over
	// its rate alone) over the time the GPUs had trials; 0: not known.
	Speedup float64 `json:"speedup,omitempty"`
	Summary string  `json:"summary,omitempty"`
}

// SharingTrial is one trial's rates: alone, shared, and how much slower shared was.
type SharingTrial struct {
	Trial     string  `json:"trial"`
	Alone     float64 `json:"rate_alone,omitempty"` // steps/s; 0: not known
	AloneFrom string  `json:"rate_alone_from,omitempty"`
	// Shared is its mean rate over the windows it shared its GPU in; 0: it never did.
	Shared   float64 `json:"rate_shared,omitempty"`
	Slowdown float64 `json:"slowdown,omitempty"` // Alone / Shared; 0: not known
	Steps    float64 `json:"steps"`
	// Busy is its busy share alone (0 to 1), from its GPU's per-process utilisation; absent
	// where the GPU reports none.
	Busy *float64 `json:"busy_share,omitempty"`
}

// SharingGPU is one GPU's number of trials over time.
type SharingGPU struct {
	GPU    string         `json:"gpu"`
	Counts []SharingCount `json:"trials_over_time"`
}

// SharingCount is a GPU's number of trials from At (seconds since the run began) on.
type SharingCount struct {
	At     float64 `json:"at"`
	Trials int     `json:"trials"`
}

// SharingDecision is one decision of the controller: when (seconds since the run began),
// on which GPU, what (open, keep, lower, alone), and the line the output said.
type SharingDecision struct {
	At     float64 `json:"at"`
	GPU    string  `json:"gpu"`
	Action string  `json:"action"`
	Trials int     `json:"trials"`
	Line   string  `json:"line"`
}
