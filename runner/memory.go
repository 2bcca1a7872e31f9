package runner

import (
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// memoryWatch turns the admitter's samples into what the outputs and metrics show: each
// running trial's memory, told when it moved enough to matter on a screen. Only the
// admitter's sampler calls it.
type memoryWatch struct {
	r    *run
	byID map[int]*plan.Task
	told map[int]uint64 // trial ID → the memory last told
}

func newMemoryWatch(r *run) *memoryWatch {
	return &memoryWatch{r: r, byID: r.tasksByID(), told: map[int]uint64{}}
}

// memoryStep is the least change worth an event: 64 MiB, or 1% of what the trial holds.
const memoryStep = 64 << 20

func (w *memoryWatch) sample(s admit.Sample) {
	w.r.met.gpus(s)
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
		w.r.emit(event.Event{Kind: event.TaskMemory, Task: t, Memory: tm.Memory, Peak: tm.Peak})
	}
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
