package prom

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Metrics are the Prometheus series runall serves with --serve (/metrics): a consumer of the
// run's events for the task series, and told the GPU samples and S3 transfers. A nil
// *Metrics is valid for those and records nothing, so that call sites need no checks.
type Metrics struct {
	reg       *prometheus.Registry
	tasks     *prometheus.GaugeVec // by state
	gpu       gpuGauges
	durations *prometheus.HistogramVec
	ooms      prometheus.Counter
	s3Bytes   *prometheus.CounterVec
	s3Files   *prometheus.CounterVec
	hostMem   *hostGauges // nil when no task sets memory:

	// A task is pending, running or finished, never two at once: pending is what is
	// neither of the others (an attempt that ran out of GPU memory is pending again).
	// Only Event touches these.
	running     map[*plan.Task]bool // tasks with an attempt running
	total, done int
}

// gpuGauges are each GPU's memory, by index and UUID.
type gpuGauges struct {
	free, reserved, total *prometheus.GaugeVec
	outOfService          *prometheus.GaugeVec // by index: 1 once runall took it out of service
}

// New makes the series of p's tasks: all pending.
func New(p *plan.Plan) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(), running: map[*plan.Task]bool{},
		tasks: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runall_tasks", Help: "Command tasks by state: pending, running, ok, failed, ignored, skipped.",
		}, []string{"state"}),
		gpu: gpuGauges{
			free: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "runall_gpu_memory_free_bytes", Help: "Measured free memory of each GPU.",
			}, []string{"gpu", "uuid"}),
			reserved: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "runall_gpu_memory_reserved_bytes", Help: "Memory reserved for trials that have started but not yet allocated their need.",
			}, []string{"gpu", "uuid"}),
			total: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "runall_gpu_memory_total_bytes", Help: "Total memory of each GPU.",
			}, []string{"gpu", "uuid"}),
			outOfService: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "runall_gpu_out_of_service", Help: "1 for a GPU runall took out of service after a fault (docs/gpu.md), 0 for one in service.",
			}, []string{"gpu"}),
		},
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "runall_task_duration_seconds", Help: "How long finished tasks ran; kind is trial (GPU) or task.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 16),
		}, []string{"kind", "status"}),
		ooms: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "runall_oom_requeues_total", Help: "Trials requeued after running out of GPU memory, or after the kernel's OOM killer took them (memory:).",
		}),
		s3Bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runall_s3_bytes_transferred_total", Help: "Bytes transferred to and from S3.",
		}, []string{"direction"}),
		s3Files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runall_s3_files_transferred_total", Help: "Files transferred to and from S3.",
		}, []string{"direction"}),
	}
	m.reg.MustRegister(m.tasks, m.gpu.free, m.gpu.reserved, m.gpu.total, m.gpu.outOfService, m.durations, m.ooms, m.s3Bytes, m.s3Files,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	if p.NeedsHost() {
		m.hostMem = newHostGauges(m.reg)
	}
	plan.WalkCommands(p.Tasks, func(*plan.Task) { m.total++ })
	m.tasks.WithLabelValues(string(results.StatusPending)).Set(float64(m.total))
	for _, s := range []results.Status{results.StatusRunning, results.StatusOK, results.StatusFailed, results.StatusIgnored, results.StatusSkipped, results.StatusStopped, results.StatusPruned} {
		m.tasks.WithLabelValues(string(s)).Set(0)
	}
	return m
}

// Event keeps the task series by the run's events: running while an attempt runs, then
// the status a task ends with for good.
func (m *Metrics) Event(ev event.Event, _ func(event.Event)) {
	switch {
	case ev.Kind == event.TaskStarted:
		m.running[ev.Task] = true
		m.tasks.WithLabelValues(string(results.StatusRunning)).Inc()
	case ev.Kind == event.TaskEnded && m.running[ev.Task]:
		delete(m.running, ev.Task)
		m.tasks.WithLabelValues(string(results.StatusRunning)).Dec()
	}
	switch {
	case ev.Kind == event.TaskEnded && ev.End == event.EndRequeue && (ev.Try == nil || ev.Try.Class != string(failclass.GPUFault)):
		m.ooms.Inc() // a GPU fault's requeue is not out of memory
	case ev.Kind == event.TaskEnded && ev.End == event.EndFinal, ev.Kind == event.TaskSkipped:
		m.finished(ev)
	}
	m.tasks.WithLabelValues(string(results.StatusPending)).Set(float64(max(m.total-len(m.running)-m.done, 0)))
}

func (m *Metrics) finished(ev event.Event) {
	s := ev.Status
	if ev.Kind == event.TaskSkipped {
		s = results.StatusSkipped
	}
	m.done++
	m.tasks.WithLabelValues(string(s)).Inc()
	if s == results.StatusSkipped {
		return
	}
	kind := "task"
	if ev.Task.GPU != nil {
		kind = "trial"
	}
	m.durations.WithLabelValues(kind, string(s)).Observe(ev.Duration.Seconds())
}

// Transferred counts the files and bytes an S3 transfer moved in direction ("upload", "download").
func (m *Metrics) Transferred(direction string, files, bytes int64) {
	if m != nil {
		m.s3Files.WithLabelValues(direction).Add(float64(files))
		m.s3Bytes.WithLabelValues(direction).Add(float64(bytes))
	}
}

// HostSample records a measurement of the container's memory.
func (m *Metrics) HostSample(mem hostmem.Memory) {
	if m != nil {
		m.hostMem.set(mem)
	}
}

// GPUs records a sample of the GPUs' memory: free, total and reserved, by index and UUID.
func (m *Metrics) GPUs(s admit.Sample) {
	if m == nil {
		return
	}
	reserved := s.Reserved
	for i, d := range s.Devices {
		idx := strconv.Itoa(d.Index)
		m.gpu.free.WithLabelValues(idx, d.UUID).Set(float64(d.Free))
		m.gpu.total.WithLabelValues(idx, d.UUID).Set(float64(d.Total))
		m.gpu.outOfService.WithLabelValues(idx) // 0 until GPUOutOfService
		if i < len(reserved) {
			m.gpu.reserved.WithLabelValues(idx, d.UUID).Set(float64(reserved[i]))
		}
	}
}

// GPUOutOfService records that runall took GPU dev out of service.
func (m *Metrics) GPUOutOfService(dev int) {
	if m != nil {
		m.gpu.outOfService.WithLabelValues(strconv.Itoa(dev)).Set(1)
	}
}

// Handler serves the series in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
