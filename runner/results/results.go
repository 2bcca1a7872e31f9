// Package results is the outcome of a run as runall records it: what --results writes, the
// summary prints, the report draws and the shards of a sweep merge. It knows nothing of the
// task file, the scheduler or the controllers whose figures it records (it defines its own
// types, which they fill: sharing.go), so that readers of a results file need nothing else.
package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/runall/runall/runner/importance"
)

// Status is the outcome of a task or run.
type Status string

const (
	StatusPending Status = "pending"
	StatusRunning Status = "running"
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusIgnored Status = "ignored" // failed with ignore-failure: counts as success
	StatusSkipped Status = "skipped" // never ran: stop-on-failure, tags, shard, resume, interrupt
	StatusStopped Status = "stopped" // ended because runall itself was stopped (SIGINT/SIGTERM)
	StatusPruned  Status = "pruned"  // stopped early by early-stop: losing; not a failure
	StatusPaused  Status = "paused"  // stopped at a checkpoint, to be resumed from it; not an end
)

// Schema is the version of results.json's schema this runall writes. It is raised by any
// change of what a field means, as well as by new fields; readers take every version up to
// it. docs/results.md lists what each version changed.
const Schema = 3

// Run is the outcome of a run: what --results writes and the summary prints.
//
//limits:flat results.json's top-level object, one field per key of its documented schema (README, --results); sub-structs would nest the JSON or need a marshaller of their own.
type Run struct {
	// Schema is the version of the file's schema: Schema when written; 1 when read from a
	// file that has none (written before the field was).
	Schema     int       `json:"schema"`
	File       string    `json:"file"`
	RunID      string    `json:"run_id"`
	Shard      string    `json:"shard,omitempty"` // "I/N" when sharded
	Status     Status    `json:"status"`          // ok, failed, or stopped (SIGINT/SIGTERM)
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"` // none while the run goes on (--serve's /api/run)
	LogDir     string    `json:"log_dir"`
	Tasks      []Task    `json:"tasks"`
	// LearnedGPUMemory is the need learned for each gpu-memory: auto group, by group name
	// (the first trial's name), in bytes.
	LearnedGPUMemory map[string]uint64 `json:"learned_gpu_memory,omitempty"`
	// LearnedHostMemory is the host need learned for each memory: auto group, by the name
	// of the trial it was learned from.
	LearnedHostMemory map[string]uint64 `json:"learned_host_memory,omitempty"`
	// GPUProcessIDs says whose process IDs the GPU driver reported: "here" (runall's pid
	// namespace: trials' memory from their own processes), "elsewhere" (the host's: processes
	// tied to trials by the order they appeared), "none" (no processes: memory estimated from
	// each device's growth) or "unknown" (no trial's process was seen).
	GPUProcessIDs string `json:"gpu_process_ids,omitempty"`
	// GPUSharing is what gpu-sharing: progress measured and decided; nil without it.
	GPUSharing *Sharing `json:"gpu_sharing,omitempty"`
	// GPUs is each GPU's health as the run watched it (gpuhealth.go); none without GPUs.
	GPUs []GPU `json:"gpus,omitempty"`

	// Objective is config objective: the metric trials are ranked by; Best names the best
	// trial by it (see Rank), and BestID is that trial's ID, which identifies it (IsBest).
	Objective *Objective `json:"objective,omitempty"`
	Best      string     `json:"best,omitempty"`
	BestID    int        `json:"best_id,omitempty"`
	// Objectives are every objective where config objective lists several, the first being
	// Objective: trials are ranked by Pareto front (each task's ParetoRank). None with one.
	Objectives []Objective `json:"objectives,omitempty"`
	// Importance is each parameter's importance for each objective, by its metric
	// (PED-ANOVA: runner/importance), where the trials have params.
	Importance map[string]importance.Result `json:"importance,omitempty"`
	// LogParams are the hyperparameters drawn log-uniformly (sample: loguniform): the
	// report draws them on a logarithmic axis however narrow their range.
	LogParams []string `json:"log_params,omitempty"`
	// Stopped says why trials were skipped by config stop-when, when they were.
	Stopped string `json:"stopped,omitempty"`
	// Report and GPUSamples are the HTML report and the GPU memory samples in LogDir.
	Report     string `json:"report,omitempty"`
	GPUSamples string `json:"gpu_samples,omitempty"`
	// FailureClasses is how many attempts failed in each class (runner/failclass), over
	// every task; none when no attempt failed (schema 3).
	FailureClasses map[string]int `json:"failure_classes,omitempty"`
	// LogErrors are the log files that could not be written in full ("path: error"): the
	// run's record is incomplete.
	LogErrors []string `json:"log_errors,omitempty"`
}

// Task is one command task's outcome. Blocks and sequences are not listed; their
// commands are.
//
//limits:flat one object of results.json's tasks, one field per key of its documented schema (README, --results), which the report and merged runs read back.
type Task struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Cmd      string `json:"cmd"`
	Status   Status `json:"status"`
	ExitCode int    `json:"exit_code"`        // -1 when killed by a signal or never started; not written when skipped or pending (task_json.go)
	Signal   string `json:"signal,omitempty"` // the signal that killed its last attempt ("SIGKILL")
	Attempts int    `json:"attempts"`
	// AttemptList is each attempt it ran, in order, with its class where it failed (schema 3).
	AttemptList []Attempt `json:"attempt_list,omitempty"`
	OOMRequeues int       `json:"oom_requeues"`
	// PassedOver is how often trials behind this one in its block's line started while it
	// waited: at most max-parallel-commands (docs/gpu.md). A trial's steps: on its first.
	PassedOver int       `json:"passed_over,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// PausedSeconds is how long it waited paused at its checkpoint between its start and its
	// end (sha, hyperband, pbt): not counted in its Duration.
	PausedSeconds float64  `json:"paused_seconds,omitempty"`
	Reason        string   `json:"reason,omitempty"` // why it failed or was skipped
	Devices       []string `json:"devices,omitempty"`
	GPUMemory     uint64   `json:"gpu_memory,omitempty"`      // the need it was admitted with, bytes
	PeakGPUMemory uint64   `json:"peak_gpu_memory,omitempty"` // the most it was seen using, bytes
	// HostMemory is the host need it was admitted with (memory:, learned or raised), bytes;
	// PeakHostMemory the most its processes held at once (PSS, or RSS).
	HostMemory     uint64 `json:"host_memory,omitempty"`
	PeakHostMemory uint64 `json:"peak_host_memory,omitempty"`
	// PeakGPUMemorySource says how PeakGPUMemory was measured: "process" (its own
	// processes, found by their PIDs), "order" (its own processes, tied to it by the order
	// they appeared: the driver reports the host's PIDs) or "device" (an estimate: its share
	// of its device's growth, where its processes could not be told apart).
	PeakGPUMemorySource string `json:"peak_gpu_memory_source,omitempty"`
	LogFile             string `json:"log_file,omitempty"`
	// Params are the for-each or matrix values that made this trial (its hyperparameters);
	// for a pbt trial that was exploited, the values it ended with (its lineage's last), and
	// InitialParams those it started with (schema 3; before, Params were those).
	Params        map[string]string `json:"params,omitempty"`
	InitialParams map[string]string `json:"initial_params,omitempty"`
	// Metrics are what the task reported (its metrics: file, runall-metric lines): each
	// metric's latest value. MetricSeries keeps the metrics reported more than once, in
	// order (per epoch), for plots. MetricWarnings say what could not be read.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// ParetoRank is the trial's Pareto front under several objectives: 1 for the first (no
	// trial is as good in every objective and better in one), 2 for those only the first
	// beats, and so on; 0 (left out) for one that did not succeed with every objective.
	ParetoRank     int                  `json:"pareto_rank,omitempty"`
	MetricSeries   map[string][]float64 `json:"metric_series,omitempty"`
	MetricWarnings []string             `json:"metric_warnings,omitempty"`
	// Resumes are the attempts that started from the trial's kept checkpoint (checkpoint:),
	// in order: the step each went on from; its metric series goes on there.
	Resumes []Resume `json:"resumes,omitempty"`
	// Lineage is a pbt trial's exploits (early-stop: {method: pbt}), in order: at each, the
	// trial whose checkpoint it continued from and the values it went on with.
	Lineage []Exploit `json:"lineage,omitempty"`
	// Forecasts are the decisions of early-stop method forecast on the trial, in order, with
	// the figures of each (schema 3).
	Forecasts []Forecast `json:"forecasts,omitempty"`
	// Progress is how far its output said it came (tqdm, Keras, Hugging Face, Lightning,
	// runall-progress lines): live while it runs, where it stopped once it ended.
	Progress *Progress `json:"progress,omitempty"`
	// UploadErrors are its own upload:s that failed as it ended ("from: error"): it stays
	// ok, but its outputs are not all where they were to go, and the run failed (schema 3).
	UploadErrors []string `json:"upload_errors,omitempty"`
	StdoutTail   []string `json:"-"` // last lines, for the failure report
	StderrTail   []string `json:"-"`
}

// Resume is an attempt of a trial that started from its kept checkpoint.
type Resume struct {
	Step  int       `json:"step"`   // the step the checkpoint held: the series goes on at Step+1
	RunID string    `json:"run_id"` // the run that resumed it (another Pod's, under claims)
	At    time.Time `json:"at"`
}

// Forecast is one decision of early-stop method forecast on a trial: at Step, its value at
// the rule's max was forecast (Median, and the 90% band Low to High), and its chance of
// ending better than Incumbent decided whether it went on.
type Forecast struct {
	Step   int     `json:"step"`
	At     int     `json:"at"` // the step forecast: the rule's max
	Median float64 `json:"median"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Chance float64 `json:"chance"`
	// Incumbent is the value to beat: the best reached at max by another trial
	// (IncumbentFrom "reached") or the best of the others' forecasts, each the end it reaches
	// with 95% chance ("forecast");
	// none before any other trial had one (Chance is then 1).
	Incumbent     *float64 `json:"incumbent,omitempty"`
	IncumbentFrom string   `json:"incumbent_from,omitempty"`
	Decision      string   `json:"decision"` // "continue", "stop" or "pause" (pause-below)
}

// Exploit is one step of a pbt trial's lineage.
type Exploit struct {
	Step   int               `json:"step"`   // the round's step
	From   string            `json:"from"`   // the trial whose checkpoint it continued from
	Value  float64           `json:"value"`  // its own value there, which put it in the bottom quantile
	Params map[string]string `json:"params"` // the values it went on with
	// Donated are the first and last step of the trial's metric_series that are From's
	// values, not its own: From's checkpoint held them when it was copied (past Step, when
	// From paused past the round's step; from step 1 when the trial's own values were not
	// known where it resumed). Its own curve is kept up to Step. None: no step is From's.
	Donated []int `json:"donated,omitempty"`
}

// PeakEstimated reports whether PeakGPUMemory is an estimate rather than its own processes'.
func (t Task) PeakEstimated() bool { return t.PeakGPUMemorySource == "device" }

// Duration is how long the task ran, 0 when it never started: from its start to its end,
// less the time it waited paused.
func (r Task) Duration() time.Duration {
	if r.StartedAt.IsZero() || r.FinishedAt.IsZero() {
		return 0
	}
	return r.FinishedAt.Sub(r.StartedAt) - time.Duration(r.PausedSeconds*float64(time.Second))
}

// Read reads a results file.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Parse reads the content of a results file of any schema up to Schema; its fields then
// mean what they mean in Schema (docs/results.md lists what each version changed).
func Parse(b []byte) (*Run, error) {
	var res Run
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("not a runall results file: %w", err)
	}
	switch {
	case res.Schema == 0:
		res.Schema = 1
	case res.Schema < 0 || res.Schema > Schema:
		return nil, fmt.Errorf("results schema %d: this runall reads schemas 1 to %d: read it with the runall that wrote it, or a newer one", res.Schema, Schema)
	}
	if res.Schema < 3 {
		for i := range res.Tasks {
			res.Tasks[i].EndedWith() // a pbt trial's params were the values it started with
		}
	}
	return &res, nil
}

// EndedWith makes an exploited pbt trial's Params the values it ended with (its last
// exploit's) and InitialParams those it started with, so that its plots and the
// importance judge what produced its metrics. A trial never exploited, or one whose
// InitialParams are set already, is left as it is.
func (r *Task) EndedWith() {
	if len(r.Lineage) == 0 || r.InitialParams != nil {
		return
	}
	r.InitialParams = r.Params
	r.Params = maps.Clone(r.Params)
	if r.Params == nil {
		r.Params = map[string]string{}
	}
	maps.Copy(r.Params, r.Lineage[len(r.Lineage)-1].Params)
}
