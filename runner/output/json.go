package output

import (
	"encoding/json"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/importance"
	"github.com/runall/runall/runner/results"
)

// jsonOutput writes one JSON object per line per event, for log shippers. Output lines are
// cleaned of escape codes like the plain output's; waiting events are written only when a
// task's reason changes, as the scheduler may repeat them every pass.
type jsonOutput struct {
	o       Options
	rs      *runState
	enc     *json.Encoder
	start   time.Time
	status  results.Status // from RunEnded, for a Close without results
	closed  bool
	scratch jsonEvent
	bars    barUpdates // a bar's updates: one a StatusEvery
}

// jsonEvent is every event's object; fields that do not apply to a kind are left out.
//
//limits:flat a row of --output json: one field a JSON key
type jsonEvent struct {
	Time     string            `json:"time"`
	Event    string            `json:"event"`
	Task     string            `json:"task,omitempty"`
	TaskID   *int              `json:"task_id,omitempty"`
	Attempt  int               `json:"attempt,omitempty"`
	Devices  []string          `json:"devices,omitempty"`
	Stream   string            `json:"stream,omitempty"`
	Line     *string           `json:"line,omitempty"`
	Status   results.Status    `json:"status,omitempty"`
	ExitCode *int              `json:"exit_code,omitempty"`
	Duration *float64          `json:"duration_seconds,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	Class    string            `json:"class,omitempty"`                 // end: a failed attempt's class (runner/failclass)
	Memory   *uint64           `json:"gpu_memory_bytes,omitempty"`      // memory: what it holds now
	Peak     *uint64           `json:"peak_gpu_memory_bytes,omitempty"` // memory: the most it has held
	Progress *results.Progress `json:"progress,omitempty"`              // progress: how far its output says it came
}

// jsonRunEnd is the last object: the run's outcome and every command's result, the same
// objects the results file holds.
//
//limits:flat a row of --output json: one field a JSON key, as results.json's
type jsonRunEnd struct {
	Time             string                       `json:"time"`
	Event            string                       `json:"event"`
	Status           results.Status               `json:"status"`
	Counts           map[results.Status]int       `json:"counts"`
	Duration         float64                      `json:"duration_seconds"`
	File             string                       `json:"file,omitempty"`
	RunID            string                       `json:"run_id,omitempty"`
	Shard            string                       `json:"shard,omitempty"`
	LogDir           string                       `json:"log_dir,omitempty"`
	Tasks            []results.Task               `json:"tasks"`
	LearnedGPUMemory map[string]uint64            `json:"learned_gpu_memory,omitempty"`
	GPUProcessIDs    string                       `json:"gpu_process_ids,omitempty"`
	GPUSharing       *results.Sharing             `json:"gpu_sharing,omitempty"`
	Objective        *results.Objective           `json:"objective,omitempty"`
	Best             string                       `json:"best,omitempty"`
	BestID           int                          `json:"best_id,omitempty"`
	Objectives       []results.Objective          `json:"objectives,omitempty"`
	Importance       map[string]importance.Result `json:"importance,omitempty"`
	Stopped          string                       `json:"stopped,omitempty"`
	Report           string                       `json:"report,omitempty"`
}

// NewJSON returns the output for --output json.
func NewJSON(o Options) Output {
	o = withDefaults(o)
	enc := json.NewEncoder(o.W) // one Write per object
	enc.SetEscapeHTML(false)
	return &jsonOutput{o: o, rs: newRunState(o.Plan, o.ParentOf), enc: enc, start: o.Now(), bars: newBarUpdates(o.StatusEvery)}
}

func jsonTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (j *jsonOutput) Event(ev event.Event) {
	now := eventTime(ev, j.o)
	e := &j.scratch
	*e = jsonEvent{Time: jsonTime(now), Event: ev.Kind.String()}
	switch ev.Kind {
	case event.SyncProgress, event.RunStatus:
		line := cleanLine(ev.Line)
		e.Line = &line
		if ev.Task != nil {
			e.Task, e.TaskID = j.rs.label(j.rs.node(ev.Task)), &ev.Task.ID
		}
		j.enc.Encode(e)
		return
	case event.RunEnded:
		j.status = ev.Status // Close writes run_end, with the results
		return
	}
	n, changed := j.rs.apply(ev, now)
	if n == nil {
		return
	}
	e.Task, e.TaskID, e.Attempt = j.rs.label(n), &ev.Task.ID, ev.Attempt
	switch ev.Kind {
	case event.TaskOutput:
		if !ev.Task.ShowOutput || !j.bars.show(n, ev.Line, now) {
			return
		}
		line := cleanLine(ev.Line)
		e.Stream, e.Line = ev.Stream, &line
	case event.TaskWaiting:
		if !changed {
			return
		}
		e.Reason = ev.Reason
	case event.TaskStarted:
		e.Devices = ev.Devices
	case event.TaskEnded:
		code, secs := ev.ExitCode, ev.Duration.Seconds()
		e.Status, e.ExitCode, e.Duration, e.Reason = ev.Status, &code, &secs, ev.Reason
		if ev.Try != nil {
			e.Class = ev.Try.Class
		}
	case event.TaskSkipped:
		e.Reason = ev.Reason
	case event.TaskMemory:
		e.Memory, e.Peak = &ev.Memory, &ev.Peak
	case event.TaskProgress:
		e.Progress = ev.Progress
	}
	j.enc.Encode(e)
}

func (j *jsonOutput) Tick(time.Time) {}

func (j *jsonOutput) Close(res *results.Run) error {
	if j.closed {
		return nil
	}
	j.closed = true
	now := j.o.Now()
	end := jsonRunEnd{Time: jsonTime(now), Event: "run_end", Status: j.status, Tasks: []results.Task{},
		Duration: now.Sub(j.start).Seconds(),
		Counts:   map[results.Status]int{results.StatusOK: 0, results.StatusFailed: 0, results.StatusIgnored: 0, results.StatusSkipped: 0, results.StatusStopped: 0, results.StatusPruned: 0}}
	if res != nil {
		end.Status, end.File, end.RunID, end.Shard, end.LogDir = res.Status, res.File, res.RunID, res.Shard, res.LogDir
		end.LearnedGPUMemory, end.GPUProcessIDs, end.GPUSharing = res.LearnedGPUMemory, res.GPUProcessIDs, res.GPUSharing
		end.Objective, end.Best, end.BestID, end.Stopped, end.Report = res.Objective, res.Best, res.BestID, res.Stopped, res.Report
		end.Objectives, end.Importance = res.Objectives, res.Importance
		if res.Tasks != nil {
			end.Tasks = res.Tasks
		}
		if !res.StartedAt.IsZero() && !res.FinishedAt.IsZero() {
			end.Duration = res.FinishedAt.Sub(res.StartedAt).Seconds()
		}
		for _, r := range res.Tasks {
			end.Counts[r.Status]++
		}
	} else {
		c := j.rs.counts()
		for s, st := range map[taskStatus]results.Status{stOK: results.StatusOK, stFailed: results.StatusFailed, stIgnored: results.StatusIgnored, stSkipped: results.StatusSkipped, stStopped: results.StatusStopped, stPruned: results.StatusPruned} {
			end.Counts[st] = c[s]
		}
	}
	return j.enc.Encode(end)
}
