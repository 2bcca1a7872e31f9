package taskfile

import (
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// Task is one entry of a tasks:, parallel-tasks: or trial tasks: list, as written. Pointers
// and zero values mean "not set", so that defaults and inheritance can be applied later.
//
//limits:flat the task file's task as written, one field per key of docs/taskfile.md's task reference, which its decoders fill key by key and the plan's loader checks against where the task stands.
type Task struct {
	Node *yaml.Node            // the task's mapping: its position is the task's
	Keys map[string]*yaml.Node // the key nodes present, for problems found after decoding

	Name, Cmd, Cwd, URL, MD5, LogPath, Metrics string
	Order                                      Order

	Tags                                     []string
	IgnoreFailure, StopOnFailure, ShowOutput *bool
	Sudo                                     bool
	ForEach                                  []string
	Matrix                                   []MatrixAxis
	Env                                      []EnvVar
	Timeout                                  time.Duration
	Retries                                  *int
	GPUMemory                                *GPUMemory
	GPUs                                     int // 0: not set
	GPUCap                                   *bool
	GPUSharing                               *SharingEntry
	GPUThreads                               int // gpu-threads: 0: not set
	HostMemory                               *HostMemory
	Upload                                   []*UploadEntry
	RecognizeMetrics                         *bool
	MetricPatterns                           []*metric.Pattern
	Sample                                   []SampleAxis
	Trials                                   int
	Seed                                     uint64
	EarlyStop                                *earlystop.Config
	Search                                   *Search
	Checkpoint                               CheckpointEntry
	DivergedOn                               *DivergedOn // diverged-on: nil: not set
	FailFast                                 int         // fail-fast: 0 not set, FailFastOff
	Hang                                     Hang        // hang-after and its kin (hang.go): the keys it sets
	OnOOM                                    *OnOOM      // on-oom: nil: not set

	Parallel []*Task // parallel-tasks:
	Steps    []*Task // tasks: (inside a parallel child)

	UnknownKeys bool // a typo may hide its cmd: then the typo alone is reported

	// Set by package plan on the copies that for-each and matrix make: the values that made
	// this copy, and what the task was before they were substituted (its name and command
	// templates). The decoders leave them empty.
	Params   []Param
	Data     int // how many of Params, the last, are data (sample:'s: plan's data.go)
	Template string
}

// MatrixAxis is one key of matrix:, with its values in file order.
type MatrixAxis struct {
	Name   string
	Values []string
}

// GPUMemory is gpu-memory: a size per device, or auto.
type GPUMemory struct {
	Bytes uint64
	Auto  bool
}

var taskKeys = []string{
	"name", "cmd", "cwd", "tags", "ignore-failure", "stop-on-failure", "show-output",
	"show-task-output", "log-path", "url", "md5", "sudo", "for-each", "parallel-tasks",
	"collapse-on-completion", "event-driven", "show-task-times",
	"env", "timeout", "retries", "matrix", "tasks", "gpu-memory", "gpus", "gpu-memory-cap", "gpu-threads", "upload",
	"metrics", "order", "recognize-metrics", "metric-pattern", "sample", "trials", "seed", "early-stop", "search", "memory",
	"checkpoint", "gpu-sharing", "diverged-on", "fail-fast", "on-oom",
	"hang-after", "hang-after-start", "hang-floor", "hang-retries", "no-progress-restarts", "gpu-release-wait",
}

var (
	envNameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	md5RE     = lazyre.New(`^[0-9a-fA-F]{32}$`)
)

// Has reports whether the task sets key.
func (t *Task) Has(key string) bool { _, ok := t.Keys[key]; return ok }

// UnmarshalYAML decodes one task, one concept at a time: what it runs, what it shows and
// records, how it multiplies into trials, and what it needs. Whether its keys fit where it
// stands (a top-level task, a parallel child, a trial's step) is checked by the plan's
// loader, which knows the place.
func (t *Task) UnmarshalYAML(n *yaml.Node) error {
	d := &Decoder{}
	t.Node = ResolveAlias(n)
	ps, ok := d.Pairs(n, "want a task (a mapping of key: value)")
	if !ok {
		return d.Err()
	}
	t.Keys = map[string]*yaml.Node{}
	for _, p := range ps {
		t.Keys[p.Name] = p.Key
		if !t.commandKey(d, p) && !t.outputKey(d, p) && !t.sweepKey(d, p) && !t.needKey(d, p) && !t.faultKey(d, p) {
			t.UnknownKeys = true
			d.UnknownKey(p, "a task", taskKeys)
		}
	}
	return d.Err()
}

// commandKey decodes a key of what the task runs and how: its name, command, directory,
// script, environment, time and attempts, failures. It reports whether p was one.
func (t *Task) commandKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "name":
		t.Name = d.Str(p)
	case "cmd":
		t.Cmd = d.Str(p)
	case "cwd":
		t.Cwd = d.Str(p)
	case "tags":
		t.Tags = d.StringOrList(p)
	case "ignore-failure":
		t.IgnoreFailure = d.Boolean(p)
	case "stop-on-failure":
		t.StopOnFailure = d.Boolean(p)
	case "url":
		t.URL = d.Str(p)
		if low := strings.ToLower(t.URL); t.URL != "" && !strings.HasPrefix(low, "http://") && !strings.HasPrefix(low, "https://") {
			d.Errorf(p.Value, "url: want an http:// or https:// address, got %q", t.URL)
		}
	case "md5":
		t.MD5 = d.Str(p)
		if !md5RE.MatchString(t.MD5) {
			d.Errorf(p.Value, "md5: want 32 hexadecimal digits, got %s", describeNode(p.Value))
		}
	case "sudo":
		if b := d.Boolean(p); b != nil {
			t.Sudo = *b
		}
	case "env":
		t.Env = decodeEnv(d, p)
	case "timeout":
		// 0 is no timeout, also where the block sets one.
		if t.Timeout = d.Duration(p, "no timeout"); t.Timeout == 0 {
			t.Timeout = NoTimeout
		}
	case "retries":
		if v, ok := d.Integer(p, 0); ok {
			t.Retries = &v
		}
	default:
		return false
	}
	return true
}

// outputKey decodes a key of what the task shows and records: its output, its logs, its
// metrics, what it uploads, its checkpoints. It reports whether p was one.
func (t *Task) outputKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "show-output", "show-task-output":
		t.ShowOutput = d.Boolean(p)
	case "log-path":
		t.LogPath = d.Str(p)
	case "collapse-on-completion", "event-driven", "show-task-times":
		d.Boolean(p) // bashful's display settings: checked, then left to the output
	case "upload":
		t.Upload = decodeTransfers[UploadEntry](d, p)
	case "metrics":
		if t.Metrics = d.Str(p); t.Metrics == "" && !isNull(p.Value) {
			d.Errorf(p.Value, "metrics: want the path of the JSON file the command writes its metrics to")
		}
	case "recognize-metrics":
		t.RecognizeMetrics = d.Boolean(p)
	case "metric-pattern":
		t.MetricPatterns = decodePatterns(d, p)
	case "checkpoint":
		t.Checkpoint = decodeCheckpoint(d, p)
	default:
		return false
	}
	return true
}

// sweepKey decodes a key of how the task becomes trials: its copies (for-each, matrix,
// sample), its children and steps, their order, early stopping, search. It reports whether
// p was one.
func (t *Task) sweepKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "for-each":
		t.ForEach = d.ScalarList(p)
	case "matrix":
		t.Matrix = decodeMatrix(d, p)
	case "parallel-tasks":
		t.Parallel = decodeTaskList(d, p)
	case "tasks":
		t.Steps = decodeTaskList(d, p)
	case "order":
		t.Order = decodeOrder(d, p)
	case "sample":
		t.Sample = decodeSample(d, p)
	case "trials":
		t.Trials, _ = d.Integer(p, 1)
	case "seed":
		if v, ok := d.Integer(p, 0); ok {
			t.Seed = uint64(v)
		}
	case "early-stop":
		t.EarlyStop = decodeEarlyStop(d, p)
	case "search":
		t.Search = decodeSearch(d, p)
	default:
		return false
	}
	return true
}

// needKey decodes a key of what a trial needs to be admitted: GPU memory and devices, and
// host memory. It reports whether p was one.
func (t *Task) needKey(d *Decoder, p Pair) bool {
	switch p.Name {
	case "gpu-memory":
		t.GPUMemory = decodeGPUMemory(d, p)
	case "gpus":
		t.GPUs, _ = d.Integer(p, 1)
	case "gpu-memory-cap":
		t.GPUCap = d.Boolean(p)
	case "gpu-sharing":
		t.GPUSharing = decodeSharing(d, p)
	case "gpu-threads":
		if v, ok := d.Integer(p, 1); ok && v > 100 {
			d.Errorf(p.Value, "gpu-threads: %d: want a percentage of the GPU's threads, 1 to 100", v)
		} else {
			t.GPUThreads = v
		}
	case "memory":
		t.HostMemory = decodeHostMemory(d, p)
	default:
		return false
	}
	return true
}

func decodeEnv(d *Decoder, p Pair) []EnvVar {
	if isNull(p.Value) {
		return nil
	}
	vars, ok := d.Pairs(p.Value, "env: want a mapping of NAME: value")
	if !ok {
		return nil
	}
	var env []EnvVar
	for _, v := range vars {
		if !envNameRE.MatchString(v.Name) {
			d.Errorf(v.Key, "env: %q is not a variable name: want letters, digits and _, not starting with a digit", v.Name)
			continue
		}
		if v.Value.Kind != yaml.ScalarNode {
			d.Errorf(v.Value, "env: %s: want a string or number, got %s", v.Name, describeNode(v.Value))
			continue
		}
		val := v.Value.Value
		if isNull(v.Value) {
			val = ""
		}
		env = append(env, EnvVar{Name: v.Name, Value: val})
	}
	return env
}

func decodeMatrix(d *Decoder, p Pair) []MatrixAxis {
	keys, ok := d.Pairs(p.Value, "matrix: want a mapping of name: [values]")
	if !ok {
		return nil
	}
	if len(keys) == 0 {
		d.Errorf(p.Value, "matrix: want at least one name: [values]")
	}
	var axes []MatrixAxis
	for _, k := range keys {
		if k.Name == "" || strings.ContainsAny(k.Name, "<> \t") {
			d.Errorf(k.Key, "matrix: %q cannot be a placeholder name: want letters, digits, - or _", k.Name)
			continue
		}
		axes = append(axes, MatrixAxis{Name: k.Name, Values: d.ScalarList(Pair{"matrix: " + k.Name, k.Key, k.Value})})
	}
	return axes
}

func decodeGPUMemory(d *Decoder, p Pair) *GPUMemory {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		if strings.EqualFold(strings.TrimSpace(p.Value.Value), "auto") {
			return &GPUMemory{Auto: true}
		}
		b, err := size.Parse(p.Value.Value)
		if err == nil && b > 0 {
			return &GPUMemory{Bytes: b}
		}
	}
	d.Errorf(p.Value, "gpu-memory: want a size per GPU such as 7GiB or 512MiB, or auto, got %s", describeNode(p.Value))
	return nil
}

// NoTimeout is timeout: 0, which overrides a block's timeout with none: the zero value
// means "not set" and inherits.
const NoTimeout time.Duration = -1

// decodeTaskList reads a list of tasks (tasks:, parallel-tasks:, a trial's tasks:).
func decodeTaskList(d *Decoder, p Pair) []*Task {
	if p.Value.Kind != yaml.SequenceNode || len(p.Value.Content) == 0 {
		d.Errorf(p.Value, "%s: want a non-empty list of tasks, got %s", p.Name, describeNode(p.Value))
		return nil
	}
	var out []*Task
	for _, item := range p.Value.Content {
		t := &Task{}
		d.Absorb(t.UnmarshalYAML(item))
		out = append(out, t)
	}
	return out
}
