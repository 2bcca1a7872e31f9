package results

import "github.com/runall/runall/runner/sharing"

// Sharing is what gpu-sharing: progress measured (runner/sharing): per trial its rate
// alone, its rate shared and its slowdown; per GPU its number of trials over time; every
// decision as the output said it; and what sharing bought, as the summary says it.
type Sharing struct {
	sharing.Figures
	Decisions []SharingDecision `json:"decisions,omitempty"`
	// Speedup is the time the trials would have taken one at a time (each one's steps over
	// its rate alone) over the time the GPUs had trials; 0: not known.
	Speedup float64 `json:"speedup,omitempty"`
	Summary string  `json:"summary,omitempty"`
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
