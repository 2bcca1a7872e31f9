package admit

// TrialBusy is the share of one device's time the kernels of a trial's processes ran
// lately, as the driver reports it per process (gpu.Probe.ProcessUtilization).
type TrialBusy struct {
	ID     int // the Request's
	Device int
	Share  float64 // 0 to 1
}

// readBusy is each trial's share of the time of each device it runs on, where the driver
// reports it per process and the trial's processes are known by their PIDs. A device whose
// driver reports no utilisation, or a trial none of whose processes computed, is left out.
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
			if s, ok := share[p]; ok {
				out = append(out, TrialBusy{ID: p.req.ID, Device: i, Share: min(s, 1)})
			}
		}
	}
	return out
}
