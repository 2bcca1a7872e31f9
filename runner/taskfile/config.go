package taskfile

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// ConfigBlock is the config: block: a Config with defaults applied, then the file's values.
type ConfigBlock struct {
	Config      Config
	Node        *yaml.Node
	ExecPattern string        // bashful's exec-replace-pattern, for url tasks' <exec>
	Warnings    []NodeProblem // accepted but ignored settings
	EarlyStopAt *yaml.Node    // early-stop:, for problems found once the objective is known
}

var configKeys = []string{
	"max-parallel-commands", "stop-on-failure", "ignore-failure", "show-output", "show-task-output",
	"log-path", "replica-replace-pattern", "exec-replace-pattern", "show-failure-report",
	"show-summary-footer", "show-summary-errors", "show-summary-times", "show-summary-steps",
	"show-task-times", "collapse-on-completion", "single-line", "event-driven", "update-interval",
	"bullet-char", "success-status-color", "running-status-color", "pending-status-color",
	"error-status-color", "bundle", "gpu-memory-margin", "oom-retries", "objective", "stop-when",
	"notify", "max-tasks", "mask", "order", "claims", "recognize-metrics", "metric-pattern", "early-stop",
	"memory-margin", "gpu-sharing", "gpu-isolation", "diverged-on", "fail-fast",
	"hang-after", "hang-after-start", "hang-floor", "hang-retries", "no-progress-restarts", "gpu-release-wait",
}

// DefaultConfig is the config of a file that says nothing.
func DefaultConfig() Config {
	return Config{
		MaxParallel:           4,
		StopOnFailure:         true,
		ShowOutput:            true,
		ReplicaReplacePattern: "<replace>",
		ShowFailureReport:     true,
		ShowSummaryFooter:     true,
		ShowTaskTimes:         true,
		GPUMemoryMargin:       DefaultMargin,
		HostMemoryMargin:      DefaultHostMargin,
		OOMRetries:            2,
		GPUIsolation:          IsolationNone,
		MaxTasks:              DefaultMaxTasks,
		FailFast:              DefaultFailFast,
		Hang:                  DefaultHang(),
	}
}

// UnmarshalYAML decodes the config: block, one concept at a time: how the run goes, how
// it is shown, what it admits trials by, and what it makes of their outcome.
func (c *ConfigBlock) UnmarshalYAML(n *yaml.Node) error {
	d := &Decoder{}
	c.Config = DefaultConfig()
	c.ExecPattern = "<exec>"
	c.Node = ResolveAlias(n)
	ps, ok := d.Pairs(n, "config: want a mapping of settings")
	if !ok {
		return d.Err()
	}
	for _, p := range ps {
		if !c.runKey(d, p) && !c.displayKey(d, p) && !c.admissionKey(d, p) && !c.outcomeKey(d, p) && !c.faultKey(d, p) {
			d.UnknownKey(p, "config:", configKeys)
		}
	}
	return d.Err()
}

// setBool sets *dst to p's value, when it is a boolean.
func setBool(d *Decoder, p Pair, dst *bool) {
	if b := d.Boolean(p); b != nil {
		*dst = *b
	}
}

// runKey decodes a key of how the run goes: how many at once, failures, the log, the
// placeholders, how many tasks, the order, the claims. It reports whether p was one.
func (c *ConfigBlock) runKey(d *Decoder, p Pair) bool {
	cfg := &c.Config
	switch p.Name {
	case "max-parallel-commands":
		if v, ok := d.Integer(p, 1); ok {
			cfg.MaxParallel = v
		}
	case "stop-on-failure":
		setBool(d, p, &cfg.StopOnFailure)
	case "ignore-failure":
		setBool(d, p, &cfg.IgnoreFailure)
	case "log-path":
		cfg.LogPath = d.Str(p)
	case "replica-replace-pattern":
		if cfg.ReplicaReplacePattern = d.Str(p); cfg.ReplicaReplacePattern == "" {
			d.Errorf(p.Value, "replica-replace-pattern: want a non-empty string such as <replace>")
			cfg.ReplicaReplacePattern = "<replace>"
		}
	case "exec-replace-pattern":
		if c.ExecPattern = d.Str(p); c.ExecPattern == "" {
			d.Errorf(p.Value, "exec-replace-pattern: want a non-empty string such as <exec>")
			c.ExecPattern = "<exec>"
		}
	case "max-tasks":
		if v, ok := d.Integer(p, 1); ok {
			cfg.MaxTasks = v
		}
	case "order":
		if o := decodeOrder(d, p); o != "" {
			cfg.Order = o
		}
	case "claims":
		if cfg.Claims = d.Str(p); cfg.Claims != "" && !strings.HasPrefix(cfg.Claims, "s3://") {
			d.Errorf(p.Value, "claims: want an s3://BUCKET/PREFIX/ URL, got %q", cfg.Claims)
		}
	default:
		return false
	}
	return true
}

// displayKey decodes a key of how the run is shown: bashful's display settings, some
// checked and left without effect. It reports whether p was one.
func (c *ConfigBlock) displayKey(d *Decoder, p Pair) bool {
	cfg := &c.Config
	switch p.Name {
	case "show-output", "show-task-output":
		setBool(d, p, &cfg.ShowOutput)
	case "show-failure-report":
		setBool(d, p, &cfg.ShowFailureReport)
	case "show-summary-footer":
		setBool(d, p, &cfg.ShowSummaryFooter)
	case "show-summary-errors":
		setBool(d, p, &cfg.ShowSummaryErrors)
	case "show-task-times":
		setBool(d, p, &cfg.ShowTaskTimes)
	case "collapse-on-completion":
		setBool(d, p, &cfg.CollapseOnCompletion)
	case "single-line":
		setBool(d, p, &cfg.SingleLine)
	case "show-summary-times", "show-summary-steps", "event-driven":
		d.Boolean(p) // accepted for bashful files; runall's output has no use for them
	case "update-interval":
		cfg.UpdateInterval = decodeUpdateInterval(d, p)
	case "bullet-char":
		if !isNull(p.Value) {
			d.Str(p)
		}
	case "success-status-color", "running-status-color", "pending-status-color", "error-status-color":
		d.Integer(p, 0)
	case "bundle":
		if !isNull(p.Value) {
			d.StringOrList(p)
		}
		c.Warnings = append(c.Warnings, NodeProblem{p.Key, "bundle: runall does not make bundles; the list is ignored"})
	default:
		return false
	}
	return true
}

// admissionKey decodes a key of what trials are admitted by: the margins kept free, and
// how often a trial that ran out of memory goes again. It reports whether p was one.
func (c *ConfigBlock) admissionKey(d *Decoder, p Pair) bool {
	cfg := &c.Config
	switch p.Name {
	case "gpu-memory-margin":
		if m, ok := decodeMargin(d, p); ok {
			cfg.GPUMemoryMargin = m
		}
	case "memory-margin":
		if m, ok := decodeMarginOf(d, p, "the container's limit"); ok {
			cfg.HostMemoryMargin = m
		}
	case "oom-retries":
		if v, ok := d.Integer(p, 0); ok {
			cfg.OOMRetries = v
		}
	case "gpu-sharing":
		if s := decodeSharing(d, p); s != nil {
			cfg.GPUSharing.Mode = s.Mode // its Pos is filled in as the plan is built
		}
	case "gpu-isolation":
		m, err := ParseIsolation(d.Str(p))
		if err != nil {
			d.Errorf(p.Value, "%v", err)
		}
		cfg.GPUIsolation = cmp.Or(m, IsolationNone)
	default:
		return false
	}
	return true
}

// outcomeKey decodes a key of what the run makes of its trials' outcome: the objective,
// stop-when, notify, masking, the metrics it reads, early stopping. It reports whether p
// was one.
func (c *ConfigBlock) outcomeKey(d *Decoder, p Pair) bool {
	cfg := &c.Config
	switch p.Name {
	case "objective":
		cfg.Objectives = decodeObjectives(d, p)
		if len(cfg.Objectives) > 0 {
			cfg.Objective = &cfg.Objectives[0]
		}
	case "stop-when":
		cfg.StopWhen = decodeCondition(d, p)
	case "notify":
		cfg.Notify = decodeNotify(d, p)
	case "mask":
		cfg.Mask = decodeMask(d, p)
	case "recognize-metrics":
		if b := d.Boolean(p); b != nil {
			cfg.MetricFormats.NoBuiltin = !*b
		}
	case "metric-pattern":
		cfg.MetricFormats.Patterns = decodePatterns(d, p)
	case "early-stop":
		cfg.EarlyStop = decodeEarlyStop(d, p)
		c.EarlyStopAt = p.Key
	default:
		return false
	}
	return true
}

// decodeUpdateInterval reads bashful's milliseconds (500) or a duration (500ms). bashful's
// "unset" is -1, so a negative number means the default.
func decodeUpdateInterval(d *Decoder, p Pair) time.Duration {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		s := strings.TrimSpace(p.Value.Value)
		// Bounded: a float too large for a Duration converts to a negative one.
		if ms, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(ms) && ms*float64(time.Millisecond) < math.MaxInt64/2 {
			return time.Duration(max(ms, 0) * float64(time.Millisecond))
		}
		if v, err := time.ParseDuration(s); err == nil && v >= 0 {
			return v
		}
	}
	d.Errorf(p.Value, "update-interval: want milliseconds (500) or a duration (500ms), got %s", describeNode(p.Value))
	return 0
}

// decodeMargin reads gpu-memory-margin: a size (2GiB), a percentage of the device (5%), or
// both separated by a comma (5%, 256MiB), the larger winning on each device.
func decodeMargin(d *Decoder, p Pair) (Margin, bool) {
	return decodeMarginOf(d, p, "each GPU")
}

// decodeMarginOf reads a margin kept free of what: a GPU's memory, the container's limit.
func decodeMarginOf(d *Decoder, p Pair, of string) (Margin, bool) {
	bad := func() (Margin, bool) {
		d.Errorf(p.Value, "%s: want a size (2GiB), a percentage of %s (5%%), or both (5%%, 256MiB), got %s", p.Name, of, describeNode(p.Value))
		return Margin{}, false
	}
	if p.Value.Kind != yaml.ScalarNode || isNull(p.Value) {
		return bad()
	}
	var m Margin
	for part := range strings.SplitSeq(p.Value.Value, ",") {
		part = strings.TrimSpace(part)
		if pct, ok := strings.CutSuffix(part, "%"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
			if err != nil || !(f >= 0 && f < 100) {
				return bad()
			}
			m.Fraction = f / 100
			continue
		}
		b, err := size.Parse(part)
		if err != nil {
			return bad()
		}
		m.Bytes = b
	}
	return m, true
}

// S3Block is the s3: block.
type S3Block struct {
	Node             *yaml.Node
	Endpoint, Region string
	Download         []*DownloadEntry
	Upload           []*UploadEntry
}

var s3Keys = []string{"endpoint", "region", "download", "upload"}

// UnmarshalYAML decodes the s3: block.
func (s *S3Block) UnmarshalYAML(n *yaml.Node) error {
	d := &Decoder{}
	s.Node = ResolveAlias(n)
	ps, ok := d.Pairs(n, "s3: want a mapping with endpoint, region, download and upload")
	if !ok {
		return d.Err()
	}
	for _, p := range ps {
		switch p.Name {
		case "endpoint":
			s.Endpoint = d.Str(p)
		case "region":
			s.Region = d.Str(p)
		case "download":
			s.Download = decodeTransfers[DownloadEntry](d, p)
		case "upload":
			s.Upload = decodeTransfers[UploadEntry](d, p)
		default:
			d.UnknownKey(p, "s3:", s3Keys)
		}
	}
	return d.Err()
}

// decodeMask reads mask: names of variables whose values are secrets, or patterns of them
// with * (MY_*_CREDENTIAL).
func decodeMask(d *Decoder, p Pair) []string {
	names := d.StringOrList(p)
	for _, n := range names {
		if !maskNameRE.MatchString(n) {
			d.Errorf(p.Value, "mask: %q is not a variable name or pattern: want letters, digits, _ and *", n)
		}
	}
	return names
}

var maskNameRE = lazyre.New(`^[A-Za-z_*][A-Za-z0-9_*]*$`)

// Config is the task file's config: block with defaults applied.
//
//limits:flat the config: block of the task file, one field a key (docs/taskfile.md lists them)
type Config struct {
	MaxParallel           int           // max-parallel-commands (default 4)
	StopOnFailure         bool          // stop-on-failure default for tasks (default true)
	IgnoreFailure         bool          // ignore-failure default for tasks
	ShowOutput            bool          // show-output / show-task-output (default true)
	LogPath               string        // log-path: one file with every task's output, as bashful
	LogPathPos            Pos           // where log-path is written (filled in as the plan is built)
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
	GPUIsolation          Isolation     // gpu-isolation: mps, auto or none (default none: docs/gpu.md#mps)
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
	// DivergedOn and FailFast are diverged-on (default auto) and fail-fast (default
	// DefaultFailFast; FailFastOff): what runall does when a block's trials go wrong, for
	// the blocks that set neither (faults.go).
	DivergedOn DivergedOn
	FailFast   int
	Hang       Hang // hang-after and its kin (hang.go), for the tasks and blocks that set none
}

// DefaultMaxTasks is how many tasks a file may expand to unless config: max-tasks (or
// LoadOptions.MaxTasks) says otherwise. A matrix multiplies quickly: 4 keys of 100 values
// are 10^8 trials, which would take the machine's memory before the first one ran.
const DefaultMaxTasks = 100_000
