package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// metrics are the Prometheus series runall serves with --metrics-addr. A nil *metrics is
// valid and records nothing, so that call sites need no checks.
type metrics struct {
	reg       *prometheus.Registry
	tasks     *prometheus.GaugeVec // by state
	gpuFree   *prometheus.GaugeVec
	gpuRes    *prometheus.GaugeVec
	gpuTotal  *prometheus.GaugeVec
	durations *prometheus.HistogramVec
	ooms      prometheus.Counter
	s3Bytes   *prometheus.CounterVec
	s3Files   *prometheus.CounterVec

	// A task is pending, running or finished, never two at once: pending is what is
	// neither of the others (an attempt that ran out of GPU memory is pending again).
	mu                       sync.Mutex
	total, running, finished int
}

func newMetrics(p *plan.Plan) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		tasks: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runall_tasks", Help: "Command tasks by state: pending, running, ok, failed, ignored, skipped.",
		}, []string{"state"}),
		gpuFree: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runall_gpu_memory_free_bytes", Help: "Measured free memory of each GPU.",
		}, []string{"gpu", "uuid"}),
		gpuRes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runall_gpu_memory_reserved_bytes", Help: "Memory reserved for trials that have started but not yet allocated their need.",
		}, []string{"gpu", "uuid"}),
		gpuTotal: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "runall_gpu_memory_total_bytes", Help: "Total memory of each GPU.",
		}, []string{"gpu", "uuid"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "runall_task_duration_seconds", Help: "How long finished tasks ran; kind is trial (GPU) or task.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 16),
		}, []string{"kind", "status"}),
		ooms: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "runall_oom_requeues_total", Help: "Trials requeued after running out of GPU memory.",
		}),
		s3Bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runall_s3_bytes_transferred_total", Help: "Bytes transferred to and from S3.",
		}, []string{"direction"}),
		s3Files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "runall_s3_files_transferred_total", Help: "Files transferred to and from S3.",
		}, []string{"direction"}),
	}
	m.reg.MustRegister(m.tasks, m.gpuFree, m.gpuRes, m.gpuTotal, m.durations, m.ooms, m.s3Bytes, m.s3Files,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	plan.WalkCommands(p.Tasks, func(*plan.Task) { m.total++ })
	m.tasks.WithLabelValues(string(results.StatusPending)).Set(float64(m.total))
	for _, s := range []results.Status{results.StatusRunning, results.StatusOK, results.StatusFailed, results.StatusIgnored, results.StatusSkipped, results.StatusStopped} {
		m.tasks.WithLabelValues(string(s)).Set(0)
	}
	return m
}

func (m *metrics) taskStarted() { m.count(1, 0) }

func (m *metrics) taskEnded() { m.count(-1, 0) }

// count moves tasks between the states pending, running and finished and sets the three.
func (m *metrics) count(running, finished int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running += running
	m.finished += finished
	m.tasks.WithLabelValues(string(results.StatusRunning)).Set(float64(m.running))
	m.tasks.WithLabelValues(string(results.StatusPending)).Set(float64(max(m.total-m.running-m.finished, 0)))
}

func (m *metrics) taskFinished(s results.Status, d time.Duration, trial bool) {
	if m == nil {
		return
	}
	m.tasks.WithLabelValues(string(s)).Inc()
	m.count(0, 1)
	if s == results.StatusSkipped {
		return
	}
	kind := "task"
	if trial {
		kind = "trial"
	}
	m.durations.WithLabelValues(kind, string(s)).Observe(d.Seconds())
}

func (m *metrics) oomRequeued() {
	if m != nil {
		m.ooms.Inc()
	}
}

func (m *metrics) transferred(direction string, files, bytes int64) {
	if m != nil {
		m.s3Files.WithLabelValues(direction).Add(float64(files))
		m.s3Bytes.WithLabelValues(direction).Add(float64(bytes))
	}
}

func (m *metrics) gpus(s admit.Sample) {
	if m == nil {
		return
	}
	reserved := s.Reserved
	for i, d := range s.Devices {
		idx := strconv.Itoa(d.Index)
		m.gpuFree.WithLabelValues(idx, d.UUID).Set(float64(d.Free))
		m.gpuTotal.WithLabelValues(idx, d.UUID).Set(float64(d.Total))
		if i < len(reserved) {
			m.gpuRes.WithLabelValues(idx, d.UUID).Set(float64(reserved[i]))
		}
	}
}

// serveMetrics serves /metrics on --metrics-addr until the returned stop is called.
func (r *run) serveMetrics() (stop func(), err error) {
	r.met = newMetrics(r.plan)
	ln, err := net.Listen("tcp", r.opts.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", r.opts.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(r.met.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.emit(event.Event{Kind: event.RunStatus, Line: "metrics server: " + err.Error()})
		}
	}()
	r.emit(event.Event{Kind: event.RunStatus, Line: "serving metrics on http://" + ln.Addr().String() + "/metrics"})
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
