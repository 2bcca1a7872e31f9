package plan

import "github.com/runall/runall/runner/taskfile"

// The values a task file spells (its config: block, a margin, an order, a transfer, a place
// in the file) are package taskfile's, which decodes them; a plan is made of them, so plan
// hands them on under the names its readers know.
type (
	Config       = taskfile.Config
	Order        = taskfile.Order
	Margin       = taskfile.Margin
	Param        = taskfile.Param
	EnvVar       = taskfile.EnvVar
	Transfer     = taskfile.Transfer
	Pos          = taskfile.Pos
	Problem      = taskfile.Problem
	FileError    = taskfile.FileError
	Search       = taskfile.Search
	Distribution = taskfile.Distribution
	Condition    = taskfile.Condition
	Notify       = taskfile.Notify
	Isolation    = taskfile.Isolation
	Sharing      = taskfile.Sharing
	SharingSpec  = taskfile.SharingSpec
	Objective    = taskfile.Objective
)

// The orders, isolations and sharings a task file may name, and the defaults of what it leaves out.
const (
	OrderFile            = taskfile.OrderFile
	OrderShuffled        = taskfile.OrderShuffled
	IsolationNone        = taskfile.IsolationNone
	IsolationMPS         = taskfile.IsolationMPS
	IsolationAuto        = taskfile.IsolationAuto
	SharingProgress      = taskfile.SharingProgress
	DefaultSearchTimeout = taskfile.DefaultSearchTimeout
)

// DefaultMargin is 5% of the device, at least 256 MiB.
var DefaultMargin = taskfile.DefaultMargin

// DefaultConfig is the config of a file that says nothing.
func DefaultConfig() Config { return taskfile.DefaultConfig() }

// RedactURL is a URL fit to print: its scheme and host, with "/…" standing for a path or query.
func RedactURL(s string) string { return taskfile.RedactURL(s) }

// Suggest returns the valid name nearest to got, or "" when none is near enough to be a typo.
func Suggest(got string, valid []string) string { return taskfile.Suggest(got, valid) }
