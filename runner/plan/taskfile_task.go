package plan

import (
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// rawTask is one entry of a tasks:, parallel-tasks: or trial tasks: list, as written. Pointers
// and zero values mean "not set", so that defaults and inheritance can be applied later.
//
//limits:flat the task file's task as written, one field per key of docs/taskfile.md's task reference, which its decoders fill key by key and the loader checks against where the task stands.
type rawTask struct {
	node *yaml.Node            // the task's mapping: its position is the task's
	keys map[string]*yaml.Node // the key nodes present, for problems found after decoding

	name, cmd, cwd, url, md5, logPath, metrics string
	order                                      Order

	tags                                     []string
	ignoreFailure, stopOnFailure, showOutput *bool
	sudo                                     bool
	forEach                                  []string
	matrix                                   []matrixAxis
	env                                      []EnvVar
	timeout                                  time.Duration
	retries                                  *int
	gpuMemory                                *gpuMemory
	gpus                                     int // 0: not set
	gpuCap                                   *bool
	gpuSharing                               *rawSharing
	gpuThreads                               int // gpu-threads: 0: not set
	hostMemory                               *hostMemory
	upload                                   []*rawUpload
	recognizeMetrics                         *bool
	metricPatterns                           []*metric.Pattern
	sample                                   []sampleAxis
	trials                                   int
	seed                                     uint64
	earlyStop                                *earlystop.Config
	search                                   *Search
	checkpoint                               rawCheckpoint

	parallel []*rawTask // parallel-tasks:
	steps    []*rawTask // tasks: (inside a parallel child)

	unknownKeys bool // a typo may hide its cmd: then the typo alone is reported

	// Set on the copies that for-each and matrix make: the values that made this copy, and
	// what the task was before they were substituted (its name and command templates).
	params   []Param
	data     int // how many of params, the last, are data (sample:'s: data.go)
	template string
}

// matrixAxis is one key of matrix:, with its values in file order.
type matrixAxis struct {
	name   string
	values []string
}

// gpuMemory is gpu-memory: a size per device, or auto.
type gpuMemory struct {
	bytes uint64
	auto  bool
}

var taskKeys = []string{
	"name", "cmd", "cwd", "tags", "ignore-failure", "stop-on-failure", "show-output",
	"show-task-output", "log-path", "url", "md5", "sudo", "for-each", "parallel-tasks",
	"collapse-on-completion", "event-driven", "show-task-times",
	"env", "timeout", "retries", "matrix", "tasks", "gpu-memory", "gpus", "gpu-memory-cap", "gpu-threads", "upload",
	"metrics", "order", "recognize-metrics", "metric-pattern", "sample", "trials", "seed", "early-stop", "search", "memory",
	"checkpoint", "gpu-sharing",
}

var (
	envNameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	md5RE     = lazyre.New(`^[0-9a-fA-F]{32}$`)
)

func (t *rawTask) has(key string) bool { _, ok := t.keys[key]; return ok }

// UnmarshalYAML decodes one task, one concept at a time: what it runs, what it shows and
// records, how it multiplies into trials, and what it needs. Whether its keys fit where it
// stands (a top-level task, a parallel child, a trial's step) is checked by the loader,
// which knows the place.
func (t *rawTask) UnmarshalYAML(n *yaml.Node) error {
	d := &nodeDecoder{}
	t.node = resolveAlias(n)
	ps, ok := d.pairs(n, "want a task (a mapping of key: value)")
	if !ok {
		return d.err()
	}
	t.keys = map[string]*yaml.Node{}
	for _, p := range ps {
		t.keys[p.name] = p.key
		if !t.commandKey(d, p) && !t.outputKey(d, p) && !t.sweepKey(d, p) && !t.needKey(d, p) {
			t.unknownKeys = true
			d.unknownKey(p, "a task", taskKeys)
		}
	}
	return d.err()
}

// commandKey decodes a key of what the task runs and how: its name, command, directory,
// script, environment, time and attempts, failures. It reports whether p was one.
func (t *rawTask) commandKey(d *nodeDecoder, p nodePair) bool {
	switch p.name {
	case "name":
		t.name = d.str(p)
	case "cmd":
		t.cmd = d.str(p)
	case "cwd":
		t.cwd = d.str(p)
	case "tags":
		t.tags = d.stringOrList(p)
	case "ignore-failure":
		t.ignoreFailure = d.boolean(p)
	case "stop-on-failure":
		t.stopOnFailure = d.boolean(p)
	case "url":
		t.url = d.str(p)
		if low := strings.ToLower(t.url); t.url != "" && !strings.HasPrefix(low, "http://") && !strings.HasPrefix(low, "https://") {
			d.errorf(p.value, "url: want an http:// or https:// address, got %q", t.url)
		}
	case "md5":
		t.md5 = d.str(p)
		if !md5RE.MatchString(t.md5) {
			d.errorf(p.value, "md5: want 32 hexadecimal digits, got %s", describeNode(p.value))
		}
	case "sudo":
		if b := d.boolean(p); b != nil {
			t.sudo = *b
		}
	case "env":
		t.env = decodeEnv(d, p)
	case "timeout":
		// 0 is no timeout, also where the block sets one.
		if t.timeout = d.duration(p, "no timeout"); t.timeout == 0 {
			t.timeout = noTimeout
		}
	case "retries":
		if v, ok := d.integer(p, 0); ok {
			t.retries = &v
		}
	default:
		return false
	}
	return true
}

// outputKey decodes a key of what the task shows and records: its output, its logs, its
// metrics, what it uploads, its checkpoints. It reports whether p was one.
func (t *rawTask) outputKey(d *nodeDecoder, p nodePair) bool {
	switch p.name {
	case "show-output", "show-task-output":
		t.showOutput = d.boolean(p)
	case "log-path":
		t.logPath = d.str(p)
	case "collapse-on-completion", "event-driven", "show-task-times":
		d.boolean(p) // bashful's display settings: checked, then left to the output
	case "upload":
		t.upload = decodeTransfers[rawUpload](d, p)
	case "metrics":
		if t.metrics = d.str(p); t.metrics == "" && !isNull(p.value) {
			d.errorf(p.value, "metrics: want the path of the JSON file the command writes its metrics to")
		}
	case "recognize-metrics":
		t.recognizeMetrics = d.boolean(p)
	case "metric-pattern":
		t.metricPatterns = decodePatterns(d, p)
	case "checkpoint":
		t.checkpoint = decodeCheckpoint(d, p)
	default:
		return false
	}
	return true
}

// sweepKey decodes a key of how the task becomes trials: its copies (for-each, matrix,
// sample), its children and steps, their order, early stopping, search. It reports whether
// p was one.
func (t *rawTask) sweepKey(d *nodeDecoder, p nodePair) bool {
	switch p.name {
	case "for-each":
		t.forEach = d.scalarList(p)
	case "matrix":
		t.matrix = decodeMatrix(d, p)
	case "parallel-tasks":
		t.parallel = decodeTaskList(d, p)
	case "tasks":
		t.steps = decodeTaskList(d, p)
	case "order":
		t.order = decodeOrder(d, p)
	case "sample":
		t.sample = decodeSample(d, p)
	case "trials":
		t.trials, _ = d.integer(p, 1)
	case "seed":
		if v, ok := d.integer(p, 0); ok {
			t.seed = uint64(v)
		}
	case "early-stop":
		t.earlyStop = decodeEarlyStop(d, p)
	case "search":
		t.search = decodeSearch(d, p)
	default:
		return false
	}
	return true
}

// needKey decodes a key of what a trial needs to be admitted: GPU memory and devices, and
// host memory. It reports whether p was one.
func (t *rawTask) needKey(d *nodeDecoder, p nodePair) bool {
	switch p.name {
	case "gpu-memory":
		t.gpuMemory = decodeGPUMemory(d, p)
	case "gpus":
		t.gpus, _ = d.integer(p, 1)
	case "gpu-memory-cap":
		t.gpuCap = d.boolean(p)
	case "gpu-sharing":
		t.gpuSharing = decodeSharing(d, p)
	case "gpu-threads":
		if v, ok := d.integer(p, 1); ok && v > 100 {
			d.errorf(p.value, "gpu-threads: %d: want a percentage of the GPU's threads, 1 to 100", v)
		} else {
			t.gpuThreads = v
		}
	case "memory":
		t.hostMemory = decodeHostMemory(d, p)
	default:
		return false
	}
	return true
}

func decodeEnv(d *nodeDecoder, p nodePair) []EnvVar {
	if isNull(p.value) {
		return nil
	}
	vars, ok := d.pairs(p.value, "env: want a mapping of NAME: value")
	if !ok {
		return nil
	}
	var env []EnvVar
	for _, v := range vars {
		if !envNameRE.MatchString(v.name) {
			d.errorf(v.key, "env: %q is not a variable name: want letters, digits and _, not starting with a digit", v.name)
			continue
		}
		if v.value.Kind != yaml.ScalarNode {
			d.errorf(v.value, "env: %s: want a string or number, got %s", v.name, describeNode(v.value))
			continue
		}
		val := v.value.Value
		if isNull(v.value) {
			val = ""
		}
		env = append(env, EnvVar{Name: v.name, Value: val})
	}
	return env
}

func decodeMatrix(d *nodeDecoder, p nodePair) []matrixAxis {
	keys, ok := d.pairs(p.value, "matrix: want a mapping of name: [values]")
	if !ok {
		return nil
	}
	if len(keys) == 0 {
		d.errorf(p.value, "matrix: want at least one name: [values]")
	}
	var axes []matrixAxis
	for _, k := range keys {
		if k.name == "" || strings.ContainsAny(k.name, "<> \t") {
			d.errorf(k.key, "matrix: %q cannot be a placeholder name: want letters, digits, - or _", k.name)
			continue
		}
		axes = append(axes, matrixAxis{name: k.name, values: d.scalarList(nodePair{"matrix: " + k.name, k.key, k.value})})
	}
	return axes
}

func decodeGPUMemory(d *nodeDecoder, p nodePair) *gpuMemory {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) {
		if strings.EqualFold(strings.TrimSpace(p.value.Value), "auto") {
			return &gpuMemory{auto: true}
		}
		b, err := size.Parse(p.value.Value)
		if err == nil && b > 0 {
			return &gpuMemory{bytes: b}
		}
	}
	d.errorf(p.value, "gpu-memory: want a size per GPU such as 7GiB or 512MiB, or auto, got %s", describeNode(p.value))
	return nil
}
