package sharing

import (
	"fmt"
	"time"
)

// What a rate must be to be believed (issue 42, point 4). A trial's output is data: a bar
// that jumps past its total, a count that goes backwards or a rate no GPU runs at would,
// believed, admit trials beside a GPU it says is fast, or lower one it says is slow.
const (
	// MaxRate is the most steps a second a rate may say: more is a count, not a rate.
	MaxRate = 1e6
	// MaxOverKind is how many times its kind's rate alone a trial's rate may be: no trial
	// runs a hundred times faster than the one of its kind measured alone.
	MaxOverKind = 100
	// KindSpread is how far apart two trials of one kind run alone (or one runs shared
	// faster than its kind alone) before the kind's rate alone stands for none of them: its
	// trials (a matrix whose trials differ in speed) are judged each by its own.
	KindSpread = 1.5
)

// unbelievable says why r is not a rate of tr's, by the rates alone a knows; "" where it may
// be.
func (a alones) unbelievable(tr *trial, r Rate) string {
	kind := a.kind(tr.Kind)
	if kind <= 0 {
		kind = tr.alone
	}
	switch {
	case r.Total > 0 && r.Steps > r.Total:
		return fmt.Sprintf("its progress %.6g jumps past its total %.6g", r.Steps, r.Total)
	case r.Steps < r.From:
		return fmt.Sprintf("its progress went back from %.6g to %.6g", r.From, r.Steps)
	case r.PerSecond > MaxRate:
		return fmt.Sprintf("%.3g steps/s is more than %.0g a second", r.PerSecond, float64(MaxRate))
	case kind > 0 && r.PerSecond > MaxOverKind*kind:
		return fmt.Sprintf("%.3g steps/s is more than %d times its kind's %.3g/s alone", r.PerSecond, MaxOverKind, kind)
	}
	return ""
}

// disbelieve is the decision that r is not a rate of tr's, said once per trial; nil once said.
func disbelieve(now time.Duration, gpu string, tr *trial, why string) *Decision {
	if tr.disbelieved {
		return nil
	}
	tr.disbelieved = true
	return &Decision{At: now, GPU: gpu, Action: Ignore, Trial: tr.ID,
		Why: fmt.Sprintf("%s's progress is not a rate (%s): it judges nothing", tr.ID, why)}
}
