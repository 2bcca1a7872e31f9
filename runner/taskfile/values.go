package taskfile

import "time"

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

// Param is one hyperparameter of a trial: a matrix key (or the for-each placeholder's name)
// and its value.
type Param struct{ Name, Value string }

// EnvVar is one entry of a task's env: map.
type EnvVar struct{ Name, Value string }

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

// decodeOrder reads order: file or longest-first.
func decodeOrder(d *Decoder, p Pair) Order {
	switch o := Order(d.Str(p)); o {
	case OrderFile, OrderLongestFirst, OrderShuffled:
		return o
	}
	d.Errorf(p.Value, "order: want file (start trials in file order), longest-first (longest recorded duration first: the default) or shuffled (an order drawn from the trials' identities: the default under asha or median early stopping), got %s", describeNode(p.Value))
	return ""
}
