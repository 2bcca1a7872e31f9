package plan

import (
	"fmt"
	"time"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
)

// Plan is a task file after parsing, validation and expansion: what runs, in what order.
// Load builds it; the scheduler runs it. Nothing in a Plan refers back to YAML.
type Plan struct {
	File   string  // path of the task file as given
	Dir    string  // directory commands run in unless a task says cwd
	Config Config  // the config: block, defaults applied
	S3     *S3Spec // the s3: block; nil when absent
	Tasks  []*Task // top-level tasks, run one after another

	// LogParams are the sample: keys drawn log-uniformly (loguniform), sorted.
	LogParams []string

	// Filtered is set when --tags left tasks out: what earlier runs recorded of them is kept.
	Filtered bool

	// Warnings are accepted-but-ignored settings worth telling the user about (a bashful
	// display key with no meaning for runall's output, say). They never stop a run.
	Warnings []Problem
}

// Config is the task file's config: block with defaults applied.
//
//limits:flat the config: block of the task file, one field a key (docs/taskfile.md lists them)
type Config struct {
	MaxParallel           int           // max-parallel-commands (default 4)
	StopOnFailure         bool          // stop-on-failure default for tasks (default true)
	IgnoreFailure         bool          // ignore-failure default for tasks
	ShowOutput            bool          // show-output / show-task-output (default true)
	LogPath               string        // log-path: one file with every task's output, as bashful
	ReplicaReplacePattern string        // replica-replace-pattern (default "<replace>")
	ShowFailureReport     bool          // show-failure-report (default true)
	ShowSummaryFooter     bool          // show-summary-footer (default true)
	ShowSummaryErrors     bool          // show-summary-errors
	ShowTaskTimes         bool          // show-task-times (default true)
	CollapseOnCompletion  bool          // collapse-on-completion
	SingleLine            bool          // single-line: the live view shows one line
	UpdateInterval        time.Duration // update-interval (bashful: milliseconds); live view refresh
	GPUMemoryMargin       Margin        // gpu-memory-margin (default 5% of the device, at least 256 MiB)
	HostMemoryMargin      Margin        // memory-margin: kept free of the container's limit (default 5%, at least 32 MiB)
	OOMRetries            int           // oom-retries (default 2)
	GPUIsolation          mps.Mode      // gpu-isolation: mps, auto or none (default none: docs/gpu.md#mps)
	GPUSharing            SharingSpec   // gpu-sharing: what decides how many trials share a GPU; "" unset (memory)
	Objective             *Objective    // objective: the metric trials are ranked by (the first of several); nil: none
	Objectives            []Objective   // objective: every metric, the first first; several rank trials by Pareto front
	StopWhen              *Condition    // stop-when: skip the trials not yet started once one meets it
	Notify                *Notify       // notify: POST the results here when the run ends
	MaxTasks              int           // max-tasks: the most tasks the file may expand to (default 100,000)
	Mask                  []string      // mask: more variable names (or NAME_* patterns) whose values are secrets
	Order                 Order         // order: how a block's trials are ordered; "" unset (see Task.Order)
	Claims                string        // claims: the s3:// prefix of a sweep's shared queue of trials
	// MetricFormats are recognize-metrics and metric-pattern: what is read from the output
	// of tasks that set neither.
	MetricFormats metric.Formats
	// EarlyStop is early-stop: the rule that stops the losing trials of every block that
	// sets none of its own; metric and mode default to the objective's. nil: none.
	EarlyStop *earlystop.Config
}

// Order is the order in which a parallel block's trials are offered to admission.
type Order string

const (
	// OrderLongestFirst starts the trials that earlier runs of the file recorded as longest
	// first (ties: the larger GPU need first); trials with no recorded duration come first,
	// in file order. Without any recorded duration it is file order.
	OrderLongestFirst Order = "longest-first"
	// OrderFile starts trials in file order.
	OrderFile Order = "file"
	// OrderShuffled starts trials in an order drawn from their identities and their
	// block's: the same on every run of the file and every runall of a sweep, unrelated to
	// the order they are written in. The default of a block under asha or median early
	// stopping, whose decisions depend on the order trials reach a step: a matrix written
	// worst first would let every trial through.
	OrderShuffled Order = "shuffled"
)

// Margin is memory kept free on every device: a fixed size, a fraction of the device, or both
// (the larger wins).
type Margin struct {
	Bytes    uint64  // at least this much
	Fraction float64 // at least this fraction of the device's total memory
}

// For returns the margin on a device with the given total memory.
func (m Margin) For(total uint64) uint64 {
	return max(m.Bytes, uint64(m.Fraction*float64(total)))
}

// DefaultMargin is 5% of the device, at least 256 MiB.
var DefaultMargin = Margin{Bytes: 256 << 20, Fraction: 0.05}

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
	KeyPos        map[string]Pos // where url, metrics and cwd are written, for problems with their ${VAR}s
	// MetricFormats say what is recognised in the output: recognize-metrics and
	// metric-pattern, the task's own, else its block's, else config's.
	MetricFormats metric.Formats

	GPU    *GPUSpec   // nil: no GPU admission
	Host   *HostSpec  // memory: nil: no host memory admission
	Upload []Transfer // upload: run when this task ends

	Parallel []*Task // parallel-tasks: children run concurrently, at most Config.MaxParallel at once
	Order    Order   // a block's order: its own, else the config's, else shuffled under asha or median, else longest-first
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
}

// IsBlock reports whether the task is a parallel block rather than a command or sequence.
func (t *Task) IsBlock() bool { return len(t.Parallel) > 0 }

// Param is one hyperparameter of a trial: a matrix key (or the for-each placeholder's name)
// and its value.
type Param struct{ Name, Value string }

// EnvVar is one entry of a task's env: map.
type EnvVar struct{ Name, Value string }

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

// Transfer is one entry of a download: or upload: list. Environment variables in From and
// To are expanded when the transfer runs, not when the file is loaded.
type Transfer struct {
	From    string
	To      string
	Extract bool          // download: unpack .zip, .tar, .tar.gz/.tgz into To
	Every   time.Duration // upload: also every so often while tasks run
	Exclude []string      // glob patterns, matched against the path relative to From
	Delete  bool          // delete what is at To but not at From
	// WholeBucket allows delete: true to an s3:// URL with no prefix: the whole bucket.
	WholeBucket bool
	Pos         Pos // the entry
	FromPos     Pos // its from: and to: values, for problems with their ${VAR}s
	ToPos       Pos
}

// Pos is a place in a task file.
type Pos struct {
	File   string
	Line   int
	Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	if p.Column == 0 { // a YAML syntax error knows only its line
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}
