package trial

import (
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/results"
)

// A pbt trial exploited at a round resumes from a copy of its donor's checkpoint, whose
// series is the donor's. Its record keeps its own curve up to the round's step, and marks
// the donor's values after it (the copy held them: the donor paused past the round's step)
// as the donor's, on the exploit (Donated), for the report and the live page to draw apart.

// donated makes m, a copy of a donor's checkpoint restored for the trial's last exploit
// (From set, and no copy of the trial's own kept since: no Base), carry the trial's own
// series up to the exploit's step and the donor's after it, and the trial's own resumes,
// not the donor's; it marks the donor's steps on the exploit. Where the trial's own values
// are not known (it ran on another runall), every step of the copy is the donor's.
func (r *trialResume) donated(m *checkpoint.Manifest) {
	if m.From == nil || m.Base != "" || len(r.lineage) == 0 {
		return
	}
	e := &r.lineage[len(r.lineage)-1]
	own := seriesOf(r.c.run.life, r.c.t)
	mine := min(e.Step, m.Step)
	for name := range m.Series {
		if len(own[name]) < mine {
			mine = 0
		}
	}
	series := make(map[string][]checkpoint.Point, len(m.Series))
	for name, pts := range m.Series {
		for i := range mine {
			series[name] = append(series[name], checkpoint.Point{Step: i + 1, Value: own[name][i]})
		}
		for _, p := range pts {
			if p.Step > mine {
				series[name] = append(series[name], p)
			}
		}
	}
	m.Series = series
	m.Resumes = resumesOf(r.c.run.life, r.c.t)
	e.Donated = nil
	if m.Step > mine {
		e.Donated = []int{mine + 1, m.Step}
	}
}

// MergeLineage is a lineage as an attempt knows it (from the rule), with the donated steps
// an earlier attempt of the trial marked on the same exploits.
func MergeLineage(have, now []results.Exploit) []results.Exploit {
	for i := range now {
		for _, h := range have {
			if now[i].Donated == nil && h.Step == now[i].Step && h.From == now[i].From {
				now[i].Donated = h.Donated
			}
		}
	}
	return now
}
