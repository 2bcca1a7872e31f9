package admit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/size"
)

// Room is a device a trial fits on now, and how much room it has there.
type Room struct {
	Device int
	Avail  uint64
}

// BestFit is the placement rule, for the admitter and for check --simulate alike: of the
// devices a trial fits on, the want with the least room that still fits, so that big gaps
// stay for big trials; ties go to the lower index. nil when fewer than want fit.
func BestFit(fits []Room, want int) []int {
	if len(fits) < want {
		return nil
	}
	sorted := slices.Clone(fits)
	slices.SortStableFunc(sorted, func(x, y Room) int { return cmp.Compare(x.Avail, y.Avail) })
	devs := make([]int, want)
	for i := range devs {
		devs[i] = sorted[i].Device
	}
	return devs
}

// gated is the rooms gate lets the trial into, and the first refusal's reason ("" when none
// refused); nil gate lets every room.
func gated(rooms []Room, gate func(dev int) (bool, string)) ([]Room, string) {
	if gate == nil {
		return rooms, ""
	}
	var ok []Room
	refused := ""
	for _, r := range rooms {
		if pass, why := gate(r.Device); pass {
			ok = append(ok, r)
		} else if refused == "" {
			refused = why
		}
	}
	return ok, refused
}

// candidatesLocked lists the devices that have room for need now, counts those that have
// room but hold a just-started trial still being tied to its processes, and says for every
// device what it has, for the waiting line.
func (a *Admitter) candidatesLocked(need uint64, learning bool) (cands []Room, tying int, why string) {
	var notes []string
	m := a.meter
	now := m.now()
	alone := learning && !m.perTrial()
	for i, d := range m.snap {
		st := &a.devs.list[i]
		reserved := st.reserved(i, d.Used, m.exact)
		avail := sub(sub(d.Free, reserved), a.margin.For(d.Total))
		if learning && !alone {
			need = m.provisional(i) // a learner shares a device on a provisional reservation
		}
		note := fmt.Sprintf("GPU%d %s free, %s reserved", i, size.Format(d.Free), size.Format(reserved))
		switch {
		case a.closed.reason(i) != "":
			note += " (" + a.closed.reason(i) + ")"
		case st.exclusive():
			note += " (learning a trial's need)"
		case st.tying(m.pids, now):
			note += " (tying a just-started trial to its processes)"
			if avail >= need {
				tying++
			}
		case alone && len(st.trials) > 0:
		case alone && st.draining > 0:
			note += " (an ended trial's memory is still being freed)"
		case avail >= need:
			cands = append(cands, Room{i, avail})
		}
		notes = append(notes, note)
	}
	return cands, tying, strings.Join(notes, "; ")
}

// fitsSomewhere fails for a need that no device could hold even empty.
func fitsSomewhere(snap []gpu.Device, margin Margin, need uint64) error {
	if need <= largest(snap, margin) {
		return nil
	}
	big := slices.MaxFunc(snap, func(x, y gpu.Device) int { return cmp.Compare(x.Total, y.Total) })
	m := margin.For(big.Total)
	return fmt.Errorf("%w: needs %s, the largest GPU has %s (%s after the %s margin)",
		ErrNeverFits, size.Format(need), size.Format(big.Total),
		size.Format(sub(big.Total, m)), size.Format(m))
}

// largest is the most any one device can give a trial: its total less the margin.
func largest(snap []gpu.Device, margin Margin) uint64 {
	var most uint64
	for _, d := range snap {
		most = max(most, sub(d.Total, margin.For(d.Total)))
	}
	return most
}
