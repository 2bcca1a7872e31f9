package admit

import (
	"fmt"
	"slices"
	"time"

	"github.com/runall/runall/gpu"
)

// releasePoll is how often a held GPU is asked whether a hung trial's processes left it.
const releasePoll = 250 * time.Millisecond

// Release holds a hung trial's GPUs out of admission until its processes left them: a
// part of its own beside the Admitter (its Closed, its probe), which has no room for more.
type Release struct {
	probe  gpu.Probe
	closed *Closed
}

// ReleaseOf is a's Release: its devices, closed through a's Closed.
func ReleaseOf(a *Admitter) *Release { return &Release{probe: a.meter.probe, closed: a.closed} }

// held is a device held for a hung trial: what it used, and what the trial's processes
// held there, as it was held.
type held struct {
	dev  int
	mine uint64 // what the trial's processes held there
	// loose is the memory no listed process held there: a driver frees a killed
	// process's memory a while after it is gone from the list.
	loose uint64
}

// HoldUntilGone closes the devices of uuids to new trials until none of pids (a hung
// trial's processes, about to be stopped) is on them any more and the memory they held
// there came back, so that the next trial placed there finds it (hang-after,
// gpu-release-wait). A device that has not after wait is said (say) and stays closed until
// it has. It returns at once; the watch runs on a goroutine of its own.
func (a *Release) HoldUntilGone(uuids []string, pids []int, wait time.Duration, who string, say func(string)) {
	left := a.holding(uuids, pids)
	if a.closed == nil || len(left) == 0 {
		return
	}
	for _, h := range left {
		a.closed.Close(h.dev, "held until the processes of hung "+who+" leave it (gpu-release-wait)")
	}
	start := time.Now()
	go func() {
		said := false
		for {
			left = slices.DeleteFunc(left, func(h held) bool {
				if !a.back(h, pids) {
					return false
				}
				a.closed.Open(h.dev)
				if said {
					say(fmt.Sprintf("GPU %d: the memory of hung %s came back after %s: it takes trials again", h.dev, who, time.Since(start).Round(time.Second)))
				}
				return true
			})
			if len(left) == 0 {
				return
			}
			if !said && time.Since(start) >= wait {
				said = true
				say(fmt.Sprintf("GPU %d: the memory of hung %s has not come back after gpu-release-wait %s: left out of admission until it does", left[0].dev, who, wait))
			}
			time.Sleep(releasePoll)
		}
	}()
}

// holding is the devices of uuids where pids hold memory now, with what they hold.
func (a *Release) holding(uuids []string, pids []int) []held {
	all, err := a.probe.Devices()
	if err != nil {
		return nil
	}
	var out []held
	for _, d := range all {
		if !slices.Contains(uuids, d.UUID) {
			continue
		}
		h := held{dev: d.Index}
		ps, _ := a.probe.Processes(d.Index)
		h.loose = loose(d.Used, ps)
		for _, p := range ps {
			if slices.Contains(pids, int(p.PID)) {
				h.mine += p.UsedMemory
			}
		}
		if h.mine > 0 {
			out = append(out, h)
		}
	}
	return out
}

// back reports whether pids left h's device and nine tenths of what they held there came
// back: the memory no listed process holds is no more than it was, give or take a tenth
// of theirs (trials that start there meanwhile, the hung one's next attempt among them,
// are listed and do not count).
func (a *Release) back(h held, pids []int) bool {
	ps, err := a.probe.Processes(h.dev)
	if err != nil {
		return true // a probe that cannot tell holds nothing back
	}
	for _, p := range ps {
		if slices.Contains(pids, int(p.PID)) {
			return false
		}
	}
	all, err := a.probe.Devices()
	if err != nil || h.dev >= len(all) {
		return true
	}
	return loose(all[h.dev].Used, ps) <= h.loose+h.mine/10
}

// loose is the memory of a device that used bytes that no process of ps holds.
func loose(used uint64, ps []gpu.Process) uint64 {
	for _, p := range ps {
		used -= min(used, p.UsedMemory)
	}
	return used
}
