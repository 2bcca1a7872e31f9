// Package failclass decides, in one function, what kind of failure an attempt was (Of),
// and what failures are alike (Signature). Every other part of runall reads the class it
// gives: the failure line, results.json, the report, the live page, the summary's groups,
// fail-fast. It knows no task, process or resource: it is told the attempt's exit, its
// last lines and what runall saw of it, as values.
package failclass

import (
	"strings"

	"github.com/runall/runall/internal/lazyre"
)

// Class is a failed attempt's kind, one word.
type Class string

const (
	// OOM: out of GPU memory (the framework's message), or of host memory (the kernel's
	// OOM killer).
	OOM Class = "oom"
	// Hung: it stopped making progress (NCCL's watchdog said so, or runall did).
	Hung Class = "hung"
	// Diverged: its watched metric went NaN or infinite, and runall ended it.
	Diverged Class = "diverged"
	// Crashed: a non-zero exit or a signal that none of the others explains.
	Crashed Class = "crashed"
	// Timeout: it ran past its timeout: and runall ended it.
	Timeout Class = "timeout"
	// NotRunnable: its command could not be run (exit 126 or 127: not found or not
	// executable; or runall could not start it).
	NotRunnable Class = "not-runnable"
	// Preempted: runall itself was stopped (SIGTERM, SIGINT, SIGHUP), or lost the trial's claim
	// (--claims: whoever claims it next runs it): never the trial's failure.
	Preempted Class = "preempted"
	// GPUFault: a fault of its GPU took it down (an Xid that takes the GPU out of service,
	// pages pending retirement, an uncorrectable ECC error), as runall saw the GPU or as CUDA
	// said in its output: never the trial's own failure.
	GPUFault Class = "gpu-fault"
)

// Classes are every class, in the order the docs and the summary list them.
var Classes = []Class{OOM, Hung, Diverged, Crashed, Timeout, NotRunnable, Preempted, GPUFault}

// Attempt is a failed attempt as Of is told it.
type Attempt struct {
	// Saw is what runall itself saw end it, "" for nothing: Preempted (runall was told to
	// stop), Timeout, Hung, Diverged, OOM (a room: the kernel's OOM killer took it).
	Saw      Class
	ExitCode int    // -1 when a signal ended it
	Signal   string // the signal that ended it ("SIGKILL"), "" for none
	// Unstarted: runall could not start its process (a cwd: that does not exist, say).
	Unstarted bool
	Lines     []string // its last lines of output, stdout's then stderr's
	// GPU is the fault runall saw take one of the attempt's GPUs out of service while it
	// ran ("xid 79 (GPU has fallen off the bus)"), "" for none.
	GPU string
}

// Known error texts, as the frameworks print them.
var (
	oomText = lazyre.New(`CUDA out of memory|OutOfMemoryError|OOM when allocating|` +
		`ran out of memory trying to allocate|RESOURCE_EXHAUSTED: Out of memory|CUDA_ERROR_OUT_OF_MEMORY|` +
		`CUBLAS_STATUS_ALLOC_FAILED|CUDA error: out of memory`)
	ncclWatchdog = lazyre.New(`Watchdog caught collective operation timeout|NCCL watchdog|ProcessGroupNCCL.*[Tt]imeout`)
	// eccText is CUDA's uncorrectable ECC error: a GPU fault, whether or not runall's health
	// read saw it yet; its line is the attempt's error line.
	eccText = lazyre.New(`uncorrectable ECC error encountered`)
)

// IsOOMText reports whether a line of a trial's output is a framework's out-of-memory
// message (PyTorch's, TensorFlow's, JAX's, CUDA's): what the GPU admitter requeues by too.
func IsOOMText(line string) bool { return oomText.MatchString(line) }

// Of is the class of a failed attempt: runall was stopped; a fault runall saw take its GPU
// out of service; what else runall saw (it timed out, hung, diverged, was OOM-killed); then
// what the output says (CUDA's uncorrectable ECC error, a framework's out-of-memory message,
// NCCL's watchdog), then the exit (126 and 127: not runnable), else crashed.
func Of(a Attempt) Class {
	switch {
	case a.Saw == Preempted:
		return Preempted
	case a.GPU != "":
		return GPUFault
	case a.Saw != "":
		return a.Saw
	case a.Unstarted:
		return NotRunnable
	case anyLine(a.Lines, eccText.MatchString):
		return GPUFault
	case anyLine(a.Lines, oomText.MatchString):
		return OOM
	case anyLine(a.Lines, ncclWatchdog.MatchString):
		return Hung
	case a.Signal == "" && (a.ExitCode == 126 || a.ExitCode == 127):
		return NotRunnable
	}
	return Crashed
}

// anyLine reports whether a line matches.
func anyLine(lines []string, match func(string) bool) bool {
	for _, l := range lines {
		if match(l) {
			return true
		}
	}
	return false
}

// known reports whether line is one of the known error texts.
func known(line string) bool {
	return oomText.MatchString(line) || ncclWatchdog.MatchString(line) || eccText.MatchString(line)
}

// ErrorLine is the line of lines that says what went wrong: the last known error text, else
// the last line that reads as an error (an Error, an exception, not found), else the last
// line that is not blank; "" when none.
func ErrorLine(lines []string) string {
	last, errish := "", ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = l
		if errorish.MatchString(l) {
			errish = l
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if known(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	if errish != "" {
		return errish
	}
	return last
}

var errorish = lazyre.New(`(?i)error|exception|not found|no such file|permission denied|fatal|panic|traceback|killed`)
