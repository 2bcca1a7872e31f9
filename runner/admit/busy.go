package admit

// TrialBusy is the share of one device's time the kernels of a trial's processes ran
// lately, as the driver reports it per process (gpu.Probe.ProcessUtilization).
type TrialBusy struct {
	ID     int // the Request's
	Device int
	Share  float64 // 0 to 1
}

// readBusy is each trial's share of the time of each device it runs on, where the driver
// reports it per process and the trial's processes are known by their PIDs. A trial whose
// processes there ran no kernel in the driver's window (listed at 0, or not listed: drivers
// differ) has a share of 0 once the device answered; a device whose driver reports no
// utilisation, or a trial none of whose processes is known there yet, is left out.
func (m *meter) readBusy(devs *devices) []TrialBusy {
	if !m.busy || !m.perTrial() {
		return nil
	}
	var out []TrialBusy
	for i := range devs.list {
		st := &devs.list[i]
		if len(st.trials) == 0 {
			continue
		}
		procs, err := m.probe.ProcessUtilization(i)
		if err != nil {
			continue // not supported, or not now: the rates decide alone
		}
		share := map[*Placement]float64{}
		for _, pu := range procs {
			if p := st.procs[pu.PID]; p != nil && !p.tie.ambiguous {
				share[p] += float64(pu.SM) / 100
			}
		}
		for _, p := range st.trials {
			if s, ok := share[p]; ok || st.knows(p) {
				out = append(out, TrialBusy{ID: p.req.ID, Device: i, Share: min(s, 1)})
			}
		}
	}
	return out
}

// knows reports whether a process of p's is seen on the device and tied to it alone.
func (st *devState) knows(p *Placement) bool {
	if p.tie.ambiguous {
		return false
	}
	for _, owner := range st.procs {
		if owner == p {
			return true
		}
	}
	return false
}
