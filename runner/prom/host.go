package prom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/runall/runall/hostmem"
)

// hostGauges are the Prometheus series of the container's host memory, set from the host
// admitter's samples while trials with memory: run.
type hostGauges struct {
	limit, used, room prometheus.Gauge
	oomKills          prometheus.Gauge // the cgroup's own counter, which runall does not reset
}

func newHostGauges(reg *prometheus.Registry) *hostGauges {
	g := &hostGauges{
		limit: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "runall_host_memory_limit_bytes", Help: "The container's memory limit (its memory cgroup's, or the machine's memory).",
		}),
		used: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "runall_host_memory_used_bytes", Help: "Memory in use in the container, less reclaimable page cache.",
		}),
		room: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "runall_host_memory_room_bytes", Help: "What more the container can take: the limit less the use, at most the machine's MemAvailable.",
		}),
		oomKills: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "runall_host_oom_kills", Help: "Processes the kernel's OOM killer took in the container's memory cgroup since it was made.",
		}),
	}
	reg.MustRegister(g.limit, g.used, g.room, g.oomKills)
	return g
}

// set records a measurement of the container's memory; a nil *hostGauges records nothing.
func (g *hostGauges) set(mem hostmem.Memory) {
	if g == nil {
		return
	}
	g.limit.Set(float64(mem.Limit))
	g.used.Set(float64(mem.Used))
	g.room.Set(float64(mem.Room()))
	g.oomKills.Set(float64(mem.OOMKills))
}
