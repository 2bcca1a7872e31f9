package plan

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// rawConfig is the config: block: a Config with defaults applied, then the file's values.
type rawConfig struct {
	Config      Config
	node        *yaml.Node
	execPattern string        // bashful's exec-replace-pattern, for url tasks' <exec>
	warnings    []nodeProblem // accepted but ignored settings
	earlyStopAt *yaml.Node    // early-stop:, for problems found once the objective is known
}

var configKeys = []string{
	"max-parallel-commands", "stop-on-failure", "ignore-failure", "show-output", "show-task-output",
	"log-path", "replica-replace-pattern", "exec-replace-pattern", "show-failure-report",
	"show-summary-footer", "show-summary-errors", "show-summary-times", "show-summary-steps",
	"show-task-times", "collapse-on-completion", "single-line", "event-driven", "update-interval",
	"bullet-char", "success-status-color", "running-status-color", "pending-status-color",
	"error-status-color", "bundle", "gpu-memory-margin", "oom-retries", "objective", "stop-when",
	"notify", "max-tasks", "mask", "order", "claims", "recognize-metrics", "metric-pattern", "early-stop",
	"memory-margin", "gpu-sharing", "gpu-isolation",
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
		GPUIsolation:          mps.None,
		MaxTasks:              DefaultMaxTasks,
	}
}

// UnmarshalYAML decodes the config: block, one concept at a time: how the run goes, how
// it is shown, what it admits trials by, and what it makes of their outcome.
func (c *rawConfig) UnmarshalYAML(n *yaml.Node) error {
	d := &nodeDecoder{}
	c.Config = DefaultConfig()
	c.execPattern = "<exec>"
	c.node = resolveAlias(n)
	ps, ok := d.pairs(n, "config: want a mapping of settings")
	if !ok {
		return d.err()
	}
	for _, p := range ps {
		if !c.runKey(d, p) && !c.displayKey(d, p) && !c.admissionKey(d, p) && !c.outcomeKey(d, p) {
			d.unknownKey(p, "config:", configKeys)
		}
	}
	return d.err()
}

// setBool sets *dst to p's value, when it is a boolean.
func setBool(d *nodeDecoder, p nodePair, dst *bool) {
	if b := d.boolean(p); b != nil {
		*dst = *b
	}
}

// runKey decodes a key of how the run goes: how many at once, failures, the log, the
// placeholders, how many tasks, the order, the claims. It reports whether p was one.
func (c *rawConfig) runKey(d *nodeDecoder, p nodePair) bool {
	cfg := &c.Config
	switch p.name {
	case "max-parallel-commands":
		if v, ok := d.integer(p, 1); ok {
			cfg.MaxParallel = v
		}
	case "stop-on-failure":
		setBool(d, p, &cfg.StopOnFailure)
	case "ignore-failure":
		setBool(d, p, &cfg.IgnoreFailure)
	case "log-path":
		cfg.LogPath = d.str(p)
	case "replica-replace-pattern":
		if cfg.ReplicaReplacePattern = d.str(p); cfg.ReplicaReplacePattern == "" {
			d.errorf(p.value, "replica-replace-pattern: want a non-empty string such as <replace>")
			cfg.ReplicaReplacePattern = "<replace>"
		}
	case "exec-replace-pattern":
		if c.execPattern = d.str(p); c.execPattern == "" {
			d.errorf(p.value, "exec-replace-pattern: want a non-empty string such as <exec>")
			c.execPattern = "<exec>"
		}
	case "max-tasks":
		if v, ok := d.integer(p, 1); ok {
			cfg.MaxTasks = v
		}
	case "order":
		if o := decodeOrder(d, p); o != "" {
			cfg.Order = o
		}
	case "claims":
		if cfg.Claims = d.str(p); cfg.Claims != "" && !strings.HasPrefix(cfg.Claims, "s3://") {
			d.errorf(p.value, "claims: want an s3://BUCKET/PREFIX/ URL, got %q", cfg.Claims)
		}
	default:
		return false
	}
	return true
}

// displayKey decodes a key of how the run is shown: bashful's display settings, some
// checked and left without effect. It reports whether p was one.
func (c *rawConfig) displayKey(d *nodeDecoder, p nodePair) bool {
	cfg := &c.Config
	switch p.name {
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
		d.boolean(p) // accepted for bashful files; runall's output has no use for them
	case "update-interval":
		cfg.UpdateInterval = decodeUpdateInterval(d, p)
	case "bullet-char":
		if !isNull(p.value) {
			d.str(p)
		}
	case "success-status-color", "running-status-color", "pending-status-color", "error-status-color":
		d.integer(p, 0)
	case "bundle":
		if !isNull(p.value) {
			d.stringOrList(p)
		}
		c.warnings = append(c.warnings, nodeProblem{p.key, "bundle: runall does not make bundles; the list is ignored"})
	default:
		return false
	}
	return true
}

// admissionKey decodes a key of what trials are admitted by: the margins kept free, and
// how often a trial that ran out of memory goes again. It reports whether p was one.
func (c *rawConfig) admissionKey(d *nodeDecoder, p nodePair) bool {
	cfg := &c.Config
	switch p.name {
	case "gpu-memory-margin":
		if m, ok := decodeMargin(d, p); ok {
			cfg.GPUMemoryMargin = m
		}
	case "memory-margin":
		if m, ok := decodeMarginOf(d, p, "the container's limit"); ok {
			cfg.HostMemoryMargin = m
		}
	case "oom-retries":
		if v, ok := d.integer(p, 0); ok {
			cfg.OOMRetries = v
		}
	case "gpu-sharing":
		if s := decodeSharing(d, p); s != nil {
			cfg.GPUSharing.Mode = s.mode // its Pos is filled in as the plan is built
		}
	case "gpu-isolation":
		m, err := mps.ParseMode(d.str(p))
		if err != nil {
			d.errorf(p.value, "%v", err)
		}
		cfg.GPUIsolation = cmp.Or(m, mps.None)
	default:
		return false
	}
	return true
}

// outcomeKey decodes a key of what the run makes of its trials' outcome: the objective,
// stop-when, notify, masking, the metrics it reads, early stopping. It reports whether p
// was one.
func (c *rawConfig) outcomeKey(d *nodeDecoder, p nodePair) bool {
	cfg := &c.Config
	switch p.name {
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
		if b := d.boolean(p); b != nil {
			cfg.MetricFormats.NoBuiltin = !*b
		}
	case "metric-pattern":
		cfg.MetricFormats.Patterns = decodePatterns(d, p)
	case "early-stop":
		cfg.EarlyStop = decodeEarlyStop(d, p)
		c.earlyStopAt = p.key
	default:
		return false
	}
	return true
}

// decodeUpdateInterval reads bashful's milliseconds (500) or a duration (500ms). bashful's
// "unset" is -1, so a negative number means the default.
func decodeUpdateInterval(d *nodeDecoder, p nodePair) time.Duration {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) {
		s := strings.TrimSpace(p.value.Value)
		// Bounded: a float too large for a Duration converts to a negative one.
		if ms, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(ms) && ms*float64(time.Millisecond) < math.MaxInt64/2 {
			return time.Duration(max(ms, 0) * float64(time.Millisecond))
		}
		if v, err := time.ParseDuration(s); err == nil && v >= 0 {
			return v
		}
	}
	d.errorf(p.value, "update-interval: want milliseconds (500) or a duration (500ms), got %s", describeNode(p.value))
	return 0
}

// decodeMargin reads gpu-memory-margin: a size (2GiB), a percentage of the device (5%), or
// both separated by a comma (5%, 256MiB), the larger winning on each device.
func decodeMargin(d *nodeDecoder, p nodePair) (Margin, bool) {
	return decodeMarginOf(d, p, "each GPU")
}

// decodeMarginOf reads a margin kept free of what: a GPU's memory, the container's limit.
func decodeMarginOf(d *nodeDecoder, p nodePair, of string) (Margin, bool) {
	bad := func() (Margin, bool) {
		d.errorf(p.value, "%s: want a size (2GiB), a percentage of %s (5%%), or both (5%%, 256MiB), got %s", p.name, of, describeNode(p.value))
		return Margin{}, false
	}
	if p.value.Kind != yaml.ScalarNode || isNull(p.value) {
		return bad()
	}
	var m Margin
	for part := range strings.SplitSeq(p.value.Value, ",") {
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

// rawS3 is the s3: block.
type rawS3 struct {
	node             *yaml.Node
	endpoint, region string
	download         []*rawDownload
	upload           []*rawUpload
}

var s3Keys = []string{"endpoint", "region", "download", "upload"}

// UnmarshalYAML decodes the s3: block.
func (s *rawS3) UnmarshalYAML(n *yaml.Node) error {
	d := &nodeDecoder{}
	s.node = resolveAlias(n)
	ps, ok := d.pairs(n, "s3: want a mapping with endpoint, region, download and upload")
	if !ok {
		return d.err()
	}
	for _, p := range ps {
		switch p.name {
		case "endpoint":
			s.endpoint = d.str(p)
		case "region":
			s.region = d.str(p)
		case "download":
			s.download = decodeTransfers[rawDownload](d, p)
		case "upload":
			s.upload = decodeTransfers[rawUpload](d, p)
		default:
			d.unknownKey(p, "s3:", s3Keys)
		}
	}
	return d.err()
}

// decodeMask reads mask: names of variables whose values are secrets, or patterns of them
// with * (MY_*_CREDENTIAL).
func decodeMask(d *nodeDecoder, p nodePair) []string {
	names := d.stringOrList(p)
	for _, n := range names {
		if !maskNameRE.MatchString(n) {
			d.errorf(p.value, "mask: %q is not a variable name or pattern: want letters, digits, _ and *", n)
		}
	}
	return names
}

var maskNameRE = lazyre.New(`^[A-Za-z_*][A-Za-z0-9_*]*$`)

// decodeOrder reads order: file or longest-first.
func decodeOrder(d *nodeDecoder, p nodePair) Order {
	switch o := Order(d.str(p)); o {
	case OrderFile, OrderLongestFirst, OrderShuffled:
		return o
	}
	d.errorf(p.value, "order: want file (start trials in file order), longest-first (longest recorded duration first: the default) or shuffled (an order drawn from the trials' identities: the default under asha or median early stopping), got %s", describeNode(p.value))
	return ""
}
