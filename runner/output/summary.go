package output

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/results"
)

// SummaryOptions configures WriteSummary.
type SummaryOptions struct {
	Color         bool // escape codes for colour allowed
	FailureReport bool // config show-failure-report: the last lines of each failed task
	TailLines     int  // lines of stdout and of stderr per failed task (default 10)
}

// WriteSummary prints the end-of-run summary: a table of the commands, the failure report,
// the GPU memory learned for gpu-memory: auto, and a closing line with the counts and
// where the logs are. Without o.Color it writes no escape codes.
func WriteSummary(w io.Writer, res *results.Run, o SummaryOptions) {
	if res == nil {
		return
	}
	if o.TailLines <= 0 {
		o.TailLines = 10
	}
	paint := func(s, sgr string) string {
		if !o.Color {
			return s
		}
		return "\x1b[" + sgr + "m" + s + "\x1b[0m"
	}
	var b bytes.Buffer // one Write at the end
	if len(res.Tasks) > 0 {
		writeTaskTable(&b, res.Tasks, paint)
	}
	if o.FailureReport {
		for _, r := range res.Tasks {
			if r.Status == results.StatusFailed {
				writeFailure(&b, r, o.TailLines, paint)
			}
		}
	}
	if len(res.LearnedGPUMemory) > 0 {
		b.WriteString("\nLearned GPU memory (gpu-memory: auto):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, k := range slices.Sorted(maps.Keys(res.LearnedGPUMemory)) {
			fmt.Fprintf(tw, "  %s\t%s\n", cleanName(k), gpu.FormatSize(res.LearnedGPUMemory[k]))
		}
		tw.Flush()
	}

	var count = map[results.Status]int{}
	for _, r := range res.Tasks {
		count[r.Status]++
	}
	parts := []string{fmt.Sprintf("%d ok", count[results.StatusOK])}
	if count[results.StatusFailed] > 0 {
		parts = append(parts, paint(fmt.Sprintf("%d failed", count[results.StatusFailed]), "31"))
	}
	if count[results.StatusStopped] > 0 {
		parts = append(parts, paint(fmt.Sprintf("%d stopped", count[results.StatusStopped]), "33"))
	}
	for _, s := range []results.Status{results.StatusIgnored, results.StatusSkipped, results.StatusPending, results.StatusRunning} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	line := "Summary: " + strings.Join(parts, ", ")
	if !res.StartedAt.IsZero() && !res.FinishedAt.IsZero() {
		line += " in " + humanDuration(res.FinishedAt.Sub(res.StartedAt))
	}
	switch {
	case res.Status == results.StatusFailed && count[results.StatusFailed] == 0:
		line += " (run failed)"
	case res.Status == results.StatusStopped:
		line += " (runall was stopped)"
	}
	b.WriteString("\n" + line + "\n")
	if res.LogDir != "" {
		b.WriteString("Logs: " + res.LogDir + "\n")
	}
	w.Write(b.Bytes())
}

// statusColor is each status's SGR code. All are two characters so that every cell of the
// status column grows by the same number of bytes and tabwriter still aligns it.
var statusColor = map[results.Status]string{
	results.StatusOK: "32", results.StatusFailed: "31", results.StatusIgnored: "33", results.StatusSkipped: "90", results.StatusRunning: "36",
	results.StatusStopped: "33",
}

func writeTaskTable(b *bytes.Buffer, tasks []results.Task, paint func(s, sgr string) string) {
	gpus := slices.ContainsFunc(tasks, func(r results.Task) bool {
		return len(r.Devices) > 0 || r.PeakGPUMemory > 0 || r.GPUMemory > 0
	})
	// The task's name comes last: a long one (an unnamed task is named by its command)
	// then widens nothing.
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	cells := []string{paint("STATUS", "01"), "EXIT", "TIME", "ATTEMPTS"}
	if gpus {
		cells = append(cells, "GPU")
	}
	fmt.Fprintln(tw, strings.Join(append(cells, "TASK"), "\t"))
	for _, r := range tasks {
		exit, took, attempts := "-", "-", "-"
		if r.Attempts > 0 || !r.StartedAt.IsZero() {
			exit, attempts = strconv.Itoa(r.ExitCode), strconv.Itoa(r.Attempts)
		}
		if d := r.Duration(); d > 0 {
			took = humanDuration(d)
		}
		if r.OOMRequeues > 0 {
			attempts += fmt.Sprintf(" (%d OOM)", r.OOMRequeues)
		}
		sgr, ok := statusColor[r.Status]
		if !ok {
			sgr = "39"
		}
		cells = append(cells[:0], paint(string(r.Status), sgr), exit, took, attempts)
		if gpus {
			cells = append(cells, gpuText(r))
		}
		name := cleanName(r.Name)
		if why := extraReason(r.Reason, r.ExitCode); why != "" && r.Status != results.StatusOK {
			name += " (" + cleanName(why) + ")"
		}
		fmt.Fprintln(tw, strings.Join(append(cells, name), "\t"))
	}
	tw.Flush()
}

// gpuText is where a task ran and what it used: "GPU-5f0c1a2b need 7.0 GiB peak 5.1 GiB";
// "peak ~5.1 GiB" where the peak is an estimate, its share of its device's growth.
func gpuText(r results.Task) string {
	var parts []string
	if len(r.Devices) > 0 {
		short := make([]string, len(r.Devices))
		for i, d := range r.Devices {
			short[i] = shortDevice(d)
		}
		parts = append(parts, strings.Join(short, ","))
	}
	if r.GPUMemory > 0 {
		parts = append(parts, "need "+gpu.FormatSize(r.GPUMemory))
	}
	if r.PeakGPUMemory > 0 {
		approx := ""
		if r.PeakEstimated() {
			approx = "~"
		}
		parts = append(parts, "peak "+approx+gpu.FormatSize(r.PeakGPUMemory))
	}
	return strings.Join(parts, " ")
}

// writeFailure is one failed task's report: both streams' last lines (bashful shows only
// stderr, but Python tracebacks and framework errors land on either) and its log file.
func writeFailure(b *bytes.Buffer, r results.Task, n int, paint func(s, sgr string) string) {
	head := "failed with " + exitText(r.ExitCode)
	if d := r.Duration(); d > 0 {
		head += " in " + humanDuration(d)
	}
	fmt.Fprintf(b, "\n%s %s\n", paint(cleanName(r.Name)+":", "31"), withReason(head, extraReason(r.Reason, r.ExitCode)))
	if r.LogFile != "" {
		fmt.Fprintf(b, "  log: %s\n", r.LogFile)
	}
	for _, s := range []struct {
		name  string
		lines []string
	}{{"stdout", r.StdoutTail}, {"stderr", r.StderrTail}} {
		lines := s.lines[max(0, len(s.lines)-n):]
		if len(lines) == 0 {
			fmt.Fprintf(b, "  %s: (nothing)\n", s.name)
			continue
		}
		plural := "s"
		if len(lines) == 1 {
			plural = ""
		}
		fmt.Fprintf(b, "  %s (last %d line%s):\n", s.name, len(lines), plural)
		for _, l := range lines {
			b.WriteString("    " + cleanLine(l) + "\n")
		}
	}
}
