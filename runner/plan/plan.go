package plan

import (
	"time"

	"github.com/runall/runall/internal/pathname"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
)

// Plan is a task file after parsing, validation and expansion: what runs, in what order.
// Load builds it; the scheduler runs it. Nothing in a Plan refers back to YAML.
type Plan struct {
	File   string   // path of the task file as given
	Files  []string // the task file and the files it includes, as named (relative to Dir unless absolute)
	Dir    string   // directory commands run in unless a task says cwd
	Config Config   // the config: block, defaults applied
	S3     *S3Spec  // the s3: block; nil when absent
	Tasks  []*Task  // top-level tasks, run one after another

	// LogParams are the sample: keys drawn log-uniformly (loguniform), sorted.
	LogParams []string

	// Filtered is set when --tags left tasks out: what earlier runs recorded of them is kept.
	Filtered bool

	// Warnings are accepted-but-ignored settings worth telling the user about (a bashful
	// display key with no meaning for runall's output, say). They never stop a run.
	Warnings []Problem
}

// Sources are the files p was read from (Files), each against Dir: what a file runall
// writes (--results) must not be.
func (p *Plan) Sources() []string {
	out := make([]string, len(p.Files))
	for i, f := range p.Files {
		out[i] = pathname.Join(p.Dir, f)
	}
	return out
}

// Task is one entry of the plan. It is a command (Cmd set), a parallel block (Parallel set),
// or a sequence inside a parallel block (Steps set: a trial that trains then evaluates).
//
//limits:flat a task of the task file, resolved: one field per task key of docs/taskfile.md (inherited and defaulted), plus its identity, so that every part of the run reads a key by its documented name.
type Task struct {
	ID   int    // unique within the plan, in file order after expansion
	Name string // name:, or the command when unnamed
	Cmd  string // cmd:, with $1..$n, $* and placeholders replaced
	Cwd  string // cwd: (absolute, or relative to Plan.Dir)
	Tags []string
	Env  []EnvVar // env:, in file order
	Pos  Pos      // where the task starts in its file

	// Key identifies the task across runs of its file: a digest of its name path (its
	// block's name, its own) and its command. Inserting lines elsewhere keeps it; renaming
	// the task or its block, or changing its command, makes it another task. Recorded
	// durations are kept by Key.
	Key string
	// Group identifies the copies of one for-each or matrix task (or the trials of a block
	// that sets their GPU need) across runs: a digest of their name path and templates as
	// written. gpu-memory: auto learns one need per Group.
	Group  string
	Params []Param // the for-each or matrix values that made this copy, in file order

	IgnoreFailure bool
	StopOnFailure bool
	ShowOutput    bool
	Timeout       time.Duration  // 0: none
	Retries       int            // extra attempts after a failure
	LogPath       string         // log-path: this task's output also goes here
	Metrics       string         // metrics: a JSON file of metrics the command writes (${VAR}s unexpanded)
	URL           string         // url: download this script and run it (or substitute <exec> in Cmd)
	MD5           string         // md5: the script's expected checksum, hex
	Sudo          bool           // sudo: run the command through sudo -n when runall is not root
	KeyPos        map[string]Pos // where url, metrics, cwd and log-path are written, for problems with their ${VAR}s
	// MetricFormats say what is recognised in the output: recognize-metrics and
	// metric-pattern, the task's own, else its block's, else config's.
	MetricFormats metric.Formats

	GPU    *GPUSpec   // nil: no GPU admission
	Host   *HostSpec  // memory: nil: no host memory admission
	Upload []Transfer // upload: run when this task ends

	Parallel []*Task // parallel-tasks: children run concurrently, at most Config.MaxParallel at once
	Order    Order   // a block's order: its own, else the config's, else shuffled under asha, median or forecast, else longest-first
	Steps    []*Task // tasks: a parallel child's own sequential tasks

	// EarlyStop is a block's early-stop (its own, else a copy of config's), metric and
	// mode filled in: the rule its trials are stopped by. Its trials and their steps point
	// to the same one. nil: they run to their end.
	EarlyStop *earlystop.Config
	// Checkpoint is a trial's checkpoint: the directory runall keeps and restores; nil: none.
	Checkpoint *Checkpoint
	// Space is where a trial under pbt draws new values from, and its task as written
	// (space.go); nil for any other trial.
	Space *Space
	// Search is a parallel child's search: its copies come from the sampler, one per trial
	// as room frees; the child itself is their template, its placeholders unreplaced.
	Search *Search
	// Faults are a block's rules for trials that go wrong (diverged-on, fail-fast), its own
	// else config's; its trials and their steps point to the same one. nil: a task in no
	// block, which config's rules apply to (Plan.ConfigFaults; faults.go).
	Faults *Faults
}

// IsBlock reports whether the task is a parallel block rather than a command or sequence.
func (t *Task) IsBlock() bool { return len(t.Parallel) > 0 }

// GPUSpec is what one trial asks of the GPUs.
type GPUSpec struct {
	Memory    uint64 // bytes per device; 0 with Auto
	Auto      bool   // gpu-memory: auto (or gpus: without gpu-memory): learn it from the first trial
	Devices   int    // gpus: (default 1)
	CapToNeed bool   // gpu-memory-cap: true: tell the framework to stay within Memory
	// Threads is gpu-threads: the percentage of the GPU's threads it may use as an MPS
	// client (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE); 0: all. Not in its identity: it changes
	// how fast it runs, not what it computes.
	Threads int
	// Sharing is gpu-sharing: the trial's own, else its block's, else config's, else memory.
	Sharing SharingSpec
}

// S3Spec is the task file's s3: block.
type S3Spec struct {
	Endpoint string
	Region   string
	Download []Transfer
	Upload   []Transfer
	Pos      Pos
}

// Checkpoint is a trial's checkpoint: the directory its script saves to and resumes from.
// runall keeps the newest complete copy of it where every runall of the sweep reaches it,
// and restores it before the trial starts again (docs/taskfile.md#checkpoints).
type Checkpoint struct {
	Dir   string        // placeholders filled; ${VAR}s expanded as the trial runs, relative to its cwd
	Every time.Duration // how often runall looks at the directory for a change
	Wait  time.Duration // how long a pause waits for a copy of the step it needs
	Pos   Pos           // where checkpoint: is written
}

// Defaults of checkpoint:'s long form.
const (
	DefaultCheckpointEvery = time.Second
	DefaultCheckpointWait  = time.Minute
)

// HostSpec is what one trial asks of the container's host memory (memory:).
type HostSpec struct {
	Memory uint64 // bytes; 0 with Auto
	Auto   bool   // memory: auto: learn it from the peak of the group's first trial
	// Group is what memory: auto learns one need for: the trial's Group, or its block's
	// when the block sets memory: for its trials.
	Group string
}

// Space is the search space a trial's values come from: its matrix and sample keys, and
// the task as written (placeholders unreplaced) that its copies are made from.
type Space struct {
	Template *Task
	Axes     []Axis
}

// Axis is one key of a space: a matrix key's values, or a sample key's distribution.
type Axis struct {
	name   string
	values []string      // matrix, or a sample list
	dist   *Distribution // sample's uniform, loguniform or int
	data   bool          // a sample key's: its values reach commands as data (data.go)
}
