package runner

import (
	"os"
	"path/filepath"
	"time"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// memoryWatch turns the admitter's samples into what the outputs and metrics show: each
// running trial's memory, told when it moved enough to matter on a screen; and the devices'
// memory over time, kept in the log directory for the report. Only the admitter's sampler
// calls it.
type memoryWatch struct {
	life    *lifecycle
	met     *metrics
	byID    map[int]*plan.Task
	told    map[int]uint64 // trial ID → the memory last told
	file    *os.File       // the log directory's gpu-samples.jsonl; nil when it cannot be written
	samples *results.SampleWriter
}

func newMemoryWatch(p *plan.Plan, logDir string, life *lifecycle, met *metrics) *memoryWatch {
	w := &memoryWatch{life: life, met: met, byID: tasksByID(p), told: map[int]uint64{}}
	f, err := outfile.OpenAppend(filepath.Join(logDir, results.SamplesFile))
	if err != nil {
		life.say("cannot keep GPU memory samples for the report: " + err.Error())
		return w
	}
	w.file, w.samples = f, results.NewSampleWriter(f)
	return w
}

// close ends the samples file; the sampler must have stopped.
func (w *memoryWatch) close() {
	if w.file == nil {
		return
	}
	err := w.samples.Err()
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.life.say("GPU memory samples are incomplete: " + err.Error())
	}
}

// memoryStep is the least change worth an event: 64 MiB, or 1% of what the trial holds.
const memoryStep = 64 << 20

func (w *memoryWatch) sample(s admit.Sample) {
	w.met.gpus(s)
	if w.samples != nil {
		devs := make([]results.SampleDevice, len(s.Devices))
		used := make([]uint64, len(s.Devices))
		for i, d := range s.Devices {
			devs[i], used[i] = results.SampleDevice{UUID: d.UUID, Name: d.Name, Total: d.Total}, d.Used
		}
		w.samples.Add(time.Now(), devs, used)
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
		w.life.emit(event.Event{Kind: event.TaskMemory, Task: t, Memory: tm.Memory, Peak: tm.Peak})
	}
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
