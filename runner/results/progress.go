package results

// Progress is how far a trial came by what its output said (runner/progress reads it): Iter
// of Of steps (Of 0 when its output gave no total) at Rate steps a second. A running trial's
// (in /api/run) has its ETA; an ended one's is where it stopped.
type Progress struct {
	Iter float64 `json:"iter"`
	Of   float64 `json:"of,omitempty"`
	// Rate is steps a second over the last 30 s, or the rate its bar printed (tqdm's it/s
	// or s/it, Keras's ms/step).
	Rate float64 `json:"rate,omitempty"`
	Unit string  `json:"unit,omitempty"` // what a step is: "it", "step", "epoch", "iter"
	// Label is the bar's description as printed ("Epoch 3"), when it has one.
	Label string `json:"label,omitempty"`
	// Source is what it was read from: "bar" (tqdm, Keras), "hf-log" (a Hugging Face log
	// dict's epoch), "runall-progress" or "metric" (a metric's steps).
	Source string `json:"source"`
	// ETASeconds is how long the steps left take at Rate (running trials with a total).
	ETASeconds float64 `json:"eta_seconds,omitempty"`
}
