package plan

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// rawConfig is the config: block: a Config with defaults applied, then the file's values.
type rawConfig struct {
	Config
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
	"memory-margin",
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
		MaxTasks:              DefaultMaxTasks,
	}
}

// UnmarshalYAML decodes the config: block. It is one case per key, so it is as long as the
// list of keys.
func (c *rawConfig) UnmarshalYAML(n *yaml.Node) error {
	d := &nodeDecoder{}
	c.Config = DefaultConfig()
	c.execPattern = "<exec>"
	c.node = resolveAlias(n)
	ps, ok := d.pairs(n, "config: want a mapping of settings")
	if !ok {
		return d.err()
	}
	setBool := func(p nodePair, dst *bool) {
		if b := d.boolean(p); b != nil {
			*dst = *b
		}
	}
	for _, p := range ps {
		switch p.name {
		case "max-parallel-commands":
			if v, ok := d.integer(p, 1); ok {
				c.MaxParallel = v
			}
		case "stop-on-failure":
			setBool(p, &c.StopOnFailure)
		case "ignore-failure":
			setBool(p, &c.IgnoreFailure)
		case "show-output", "show-task-output":
			setBool(p, &c.ShowOutput)
		case "log-path":
			c.LogPath = d.str(p)
		case "replica-replace-pattern":
			if c.ReplicaReplacePattern = d.str(p); c.ReplicaReplacePattern == "" {
				d.errorf(p.value, "replica-replace-pattern: want a non-empty string such as <replace>")
				c.ReplicaReplacePattern = "<replace>"
			}
		case "exec-replace-pattern":
			if c.execPattern = d.str(p); c.execPattern == "" {
				d.errorf(p.value, "exec-replace-pattern: want a non-empty string such as <exec>")
				c.execPattern = "<exec>"
			}
		case "show-failure-report":
			setBool(p, &c.ShowFailureReport)
		case "show-summary-footer":
			setBool(p, &c.ShowSummaryFooter)
		case "show-summary-errors":
			setBool(p, &c.ShowSummaryErrors)
		case "show-task-times":
			setBool(p, &c.ShowTaskTimes)
		case "collapse-on-completion":
			setBool(p, &c.CollapseOnCompletion)
		case "single-line":
			setBool(p, &c.SingleLine)
		case "show-summary-times", "show-summary-steps", "event-driven":
			d.boolean(p) // accepted for bashful files; runall's output has no use for them
		case "update-interval":
			c.UpdateInterval = decodeUpdateInterval(d, p)
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
		case "gpu-memory-margin":
			if m, ok := decodeMargin(d, p); ok {
				c.GPUMemoryMargin = m
			}
		case "memory-margin":
			if m, ok := decodeMarginOf(d, p, "the container's limit"); ok {
				c.HostMemoryMargin = m
			}
		case "oom-retries":
			if v, ok := d.integer(p, 0); ok {
				c.OOMRetries = v
			}
		case "objective":
			c.Objective = decodeObjective(d, p)
		case "stop-when":
			c.StopWhen = decodeCondition(d, p)
		case "notify":
			c.Notify = decodeNotify(d, p)
		case "max-tasks":
			if v, ok := d.integer(p, 1); ok {
				c.MaxTasks = v
			}
		case "mask":
			c.Mask = decodeMask(d, p)
		case "order":
			if o := decodeOrder(d, p); o != "" {
				c.Order = o
			}
		case "claims":
			if c.Claims = d.str(p); c.Claims != "" && !strings.HasPrefix(c.Claims, "s3://") {
				d.errorf(p.value, "claims: want an s3://BUCKET/PREFIX/ URL, got %q", c.Claims)
			}
		case "recognize-metrics":
			if b := d.boolean(p); b != nil {
				c.MetricFormats.NoBuiltin = !*b
			}
		case "metric-pattern":
			c.MetricFormats.Patterns = decodePatterns(d, p)
		case "early-stop":
			c.EarlyStop = decodeEarlyStop(d, p)
			c.earlyStopAt = p.key
		default:
			d.unknownKey(p, "config:", configKeys)
		}
	}
	return d.err()
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
