package prom

import (
	"strings"
	"testing"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/internal/plantest"
)

// TestHostGauges: a plan with memory: serves the container's memory; one without does not.
func TestHostGauges(t *testing.T) {
	m := New(plantest.Load(t, "tasks:\n  - {cmd: 'true', memory: 1GiB}\n"))
	m.HostSample(hostmem.Memory{Limit: 2 << 30, Limited: true, Used: 1 << 30, OOMKills: 3, HasOOMKills: true})
	want := map[string]float64{
		"runall_host_memory_limit_bytes": 2 << 30, "runall_host_memory_used_bytes": 1 << 30,
		"runall_host_memory_room_bytes": 1 << 30, "runall_host_oom_kills": 3,
	}
	if got := hostSeries(t, m); len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	} else {
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s = %v, want %v", name, got[name], w)
			}
		}
	}
	without := New(plantest.Load(t, "tasks:\n  - {cmd: 'true'}\n"))
	without.HostSample(hostmem.Memory{Limit: 1})
	if got := hostSeries(t, without); len(got) != 0 {
		t.Errorf("a plan without memory: serves %v", got)
	}
}

// hostSeries is what m's registry serves of the runall_host_* gauges.
func hostSeries(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if name := f.GetName(); strings.HasPrefix(name, "runall_host_") {
			out[name] = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return out
}
