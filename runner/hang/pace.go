package hang

import (
	"fmt"
	"time"

	"github.com/runall/runall/runner/taskfile"
)

// Signs a trial shows: the real ones (a progress step, a metric value) teach its pace and
// let auto judge it; output lines count only for a trial that shows no real one.
const (
	signProgress = "progress step"
	signMetric   = "metric value"
	signSaved    = "checkpoint save" // a runall-checkpoint line: the script saved its checkpoint
	signOutput   = "output line"
)

// pace is what the watch learned of one trial.
type pace struct {
	attempt int
	started time.Time // the attempt's start
	last    time.Time // its last sign; zero: none yet in this attempt
	kind    string    // what that sign was
	real    bool      // it showed a progress step or a metric in this attempt
	gap     time.Duration
	caught  bool     // found hung in this attempt: judged no more until the next
	devs    []string // the GPUs the attempt runs on, by UUID
}

// sign records a sign of kind at now: a real one ends the reign of output lines, and the
// gap since the last real one may be the longest yet (the time before the first sign is
// start-up, not pace).
func (p *pace) sign(kind string, now time.Time) (gap time.Duration) {
	real := kind != signOutput
	switch {
	case p.caught:
		return 0 // what a hung attempt tells as it is stopped is no pace
	case !real && p.real:
		return 0 // a trial that shows progress is judged by it, not by its chatter
	case real && p.real:
		gap = now.Sub(p.last)
		p.gap = max(p.gap, gap)
	}
	p.real = p.real || real
	p.last, p.kind = now, kind
	return gap
}

// verdict is a trial judged: hung, and why; "" when it is not.
func (p *pace) verdict(r taskfile.Hang, group time.Duration, now time.Time) string {
	if p.caught {
		return ""
	}
	switch {
	case p.real && r.After == taskfile.HangAuto:
		gap := p.gap
		from := "its longest gap between signs"
		if gap == 0 {
			gap, from = group, "its block's longest gap (it is new)"
		}
		rule := max(5*gap, r.Floor)
		if idle := now.Sub(p.last); idle > rule {
			return fmt.Sprintf("no %s for %s since %s; hang-after auto: 5 × %s (%s), never less than hang-floor %s: %s",
				p.kind, round(idle), p.last.Format(time.TimeOnly), round(gap), from, r.Floor, round(rule))
		}
	case p.last.IsZero():
		if rule := r.StartRule(); rule > 0 && now.Sub(p.started) > rule {
			return fmt.Sprintf("no sign of life for %s since its start at %s; hang-after-start: %s",
				round(now.Sub(p.started)), p.started.Format(time.TimeOnly), rule)
		}
	default: // a duration set by hand judges output lines alone too
		rule, key := r.After, "hang-after"
		if !p.real && rule <= 0 {
			rule, key = r.StartRule(), "hang-after-start"
		}
		if idle := now.Sub(p.last); rule > 0 && idle > rule {
			return fmt.Sprintf("no %s for %s since %s; %s: %s", p.kind, round(idle), p.last.Format(time.TimeOnly), key, rule)
		}
	}
	return ""
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
