package memwatch

import (
	"os"
	"path/filepath"
	"time"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/results"
)

// Watch turns the admitter's samples into what the outputs and metrics show: each
// running trial's memory, told when it moved enough to matter on a screen; and the devices'
// memory over time, with the container's beside them, kept in the log directory for the
// report. Only one sampler calls it: the GPU admitter's, or, in a run without GPUs, the
// host admitter's.
type Watch struct {
	emit      func(event.Event) // the run's stream: TaskMemory, and what it says
	met       *prom.Metrics
	byID      map[int]*plan.Task
	told      map[int]uint64 // trial ID → the memory last told
	file      *os.File       // the log directory's gpu-samples.jsonl; nil when it cannot be written
	samples   *results.SampleWriter
	container containerMemory
}

// New is the watch of p's trials, keeping its samples in logDir's gpu-samples.jsonl, telling
// emit and met (nil: no server) what they show, and reading container (nil: not sampled).
func New(p *plan.Plan, logDir string, emit func(event.Event), met *prom.Metrics, container hostadmit.Reader) *Watch {
	w := &Watch{emit: emit, met: met, byID: map[int]*plan.Task{}, told: map[int]uint64{}, container: containerMemory{mem: container}}
	plan.Walk(p.Tasks, func(t *plan.Task) { w.byID[t.ID] = t })
	f, err := outfile.OpenAppend(filepath.Join(logDir, results.SamplesFile))
	if err != nil {
		w.say("cannot keep GPU memory samples for the report: " + err.Error())
		return w
	}
	w.file, w.samples = f, results.NewSampleWriter(f)
	return w
}

// say tells the run a status line.
func (w *Watch) say(line string) { w.emit(event.Event{Kind: event.RunStatus, Line: line}) }

// Close ends the samples file; the sampler must have stopped.
func (w *Watch) Close() {
	if w.file == nil {
		return
	}
	err := w.samples.Err()
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.say("GPU memory samples are incomplete: " + err.Error())
	}
}

// keep keeps a sample of the devices' memory, and the container's beside it.
func (w *Watch) keep(devs []results.SampleDevice, used []uint64) {
	now := time.Now()
	if m, ok := w.container.read(now); ok {
		devs = append(devs, results.SampleDevice{UUID: results.ContainerDevice, Name: "container", Total: m.Limit})
		used = append(used, m.Used)
	}
	w.samples.Add(now, devs, used)
}

// SampleContainer keeps a sample of the container's memory alone: the host admitter's
// sampler calls it in a run without GPUs.
func (w *Watch) SampleContainer() {
	if w.samples != nil {
		w.keep(nil, nil)
	}
}

// containerMemory reads the container's memory for the samples at most once a second: the
// GPU sampler calls four times a second, and twenty while it ties a trial to its processes.
type containerMemory struct {
	mem  hostadmit.Reader // nil: not sampled
	at   time.Time
	last hostmem.Memory
	ok   bool
}

func (c *containerMemory) read(now time.Time) (hostmem.Memory, bool) {
	if c.mem == nil {
		return hostmem.Memory{}, false
	}
	if now.Sub(c.at) >= time.Second {
		m, err := c.mem.Read()
		c.at, c.last, c.ok = now, m, err == nil && m.Limit > 0
	}
	return c.last, c.ok
}

// memoryStep is the least change worth an event: 64 MiB, or 1% of what the trial holds.
const memoryStep = 64 << 20

// Sample takes a sample of the GPU admitter's: each GPU's memory (the metrics, the samples
// file, the container's beside it) and each running trial's (TaskMemory, when it moved).
func (w *Watch) Sample(s admit.Sample) {
	w.met.GPUs(s)
	if w.samples != nil {
		devs := make([]results.SampleDevice, len(s.Devices))
		used := make([]uint64, len(s.Devices))
		for i, d := range s.Devices {
			devs[i], used[i] = results.SampleDevice{UUID: d.UUID, Name: d.Name, Total: d.Total}, d.Used
		}
		w.keep(devs, used)
	}
	for _, tm := range s.Trials {
		last, told := w.told[tm.ID]
		if told && diff(tm.Memory, last) < max(memoryStep, last/100) {
			continue
		}
		t, ok := w.byID[tm.ID]
		if !ok {
			continue
		}
		w.told[tm.ID] = tm.Memory
		w.emit(event.Event{Kind: event.TaskMemory, Task: t, Memory: tm.Memory, Peak: tm.Peak})
	}
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
