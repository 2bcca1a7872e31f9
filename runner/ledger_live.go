package runner

import (
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/results"
)

// liveTask is what the ledger knows of a task that has not ended yet beyond its result:
// the metrics it reported so far, the most GPU memory it was seen holding, why it waits,
// how far its output says it came.
// A result takes these from the task's final event (its Detail) once it ends; until then
// the results served while the run goes on (--serve's /api/run and report) show these, so
// that a running trial's curve grows and a waiting one says why.
type liveTask struct {
	metrics  *metric.Set       // its values so far, within the bounds its final result keeps
	peak     uint64            // bytes of GPU memory, the most seen (TaskMemory)
	waiting  string            // why it waits (TaskWaiting), "" once it started
	progress *results.Progress // how far its output says it came (TaskProgress)
}

// liveTasks is what the ledger knows of the tasks that have not ended, by Task.ID: a part it
// holds, guarded by its lock.
type liveTasks map[int]*liveTask

// take records what ev says of a task that has not ended. A task's final end or skip
// forgets it: its result holds what it ended with.
func (live liveTasks) take(ev event.Event) {
	id := ev.Task.ID
	if ev.Kind == event.TaskSkipped || ev.Kind == event.TaskEnded && ev.End == event.EndFinal {
		delete(live, id)
		return
	}
	lt := live[id]
	if lt == nil {
		switch ev.Kind {
		case event.TaskWaiting, event.TaskStarted, event.TaskMetric, event.TaskMemory, event.TaskProgress:
		default:
			return
		}
		lt = &liveTask{metrics: &metric.Set{}}
		live[id] = lt
	}
	switch ev.Kind {
	case event.TaskWaiting:
		lt.waiting = ev.Reason
	case event.TaskStarted:
		// A new attempt reports its metrics from the start again, as its result will hold them;
		// a resumed one from the series its kept checkpoint restored.
		lt.metrics, lt.waiting, lt.progress = &metric.Set{}, "", nil
		if ev.Detail != nil {
			lt.metrics.Seed(ev.Detail.MetricSeries)
		}
	case event.TaskMetric:
		lt.metrics.Add(ev.Metric, ev.Value)
	case event.TaskMemory:
		lt.peak = max(lt.peak, ev.Peak)
	case event.TaskProgress:
		lt.progress = ev.Progress
	}
}

// with is res, a task that has not ended, with what the ledger knows of it so far. A task
// that ended is res unchanged: its result is final.
func (live liveTasks) with(res results.Task) results.Task {
	lt := live[res.ID]
	if lt == nil || (res.Status != results.StatusRunning && res.Status != results.StatusPending) {
		return res
	}
	if res.Status == results.StatusPending && lt.waiting != "" {
		res.Reason = lt.waiting
	}
	if res.Status == results.StatusRunning {
		res.Metrics, res.MetricSeries, _ = lt.metrics.Result()
		res.PeakGPUMemory = max(res.PeakGPUMemory, lt.peak)
		res.Progress = lt.progress
	}
	return res
}
