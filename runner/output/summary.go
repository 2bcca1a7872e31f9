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

	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/size"
)

// SummaryOptions configures WriteSummary.
type SummaryOptions struct {
	Color         bool // escape codes for colour allowed
	FailureReport bool // config show-failure-report: the last lines of each failed task
	TailLines     int  // lines of stdout and of stderr per failed task (default 10)
	Width         int  // columns the task table keeps within (default 80)
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
		width := o.Width
		if width <= 0 {
			width = tableWidth
		}
		writeTaskTable(&b, res, width, paint)
	}
	writeMetricWarnings(&b, res.Tasks)
	writeFailureGroups(&b, res)
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
			fmt.Fprintf(tw, "  %s\t%s\n", cleanName(k), size.Format(res.LearnedGPUMemory[k]))
		}
		tw.Flush()
	}

	writeUploadErrors(&b, res.Tasks)
	if len(res.LogErrors) > 0 {
		b.WriteString("\nLogs not written in full (the record is incomplete):\n")
		for _, e := range res.LogErrors {
			b.WriteString("  " + cleanLine(e) + "\n")
		}
	}
	writeImportance(&b, res)
	if sh := res.GPUSharing; sh != nil && sh.Summary != "" {
		b.WriteString("\nGPU sharing (gpu-sharing: progress): " + sh.Summary + "\n")
	}
	b.WriteString("\n" + summaryLine(res, paint) + "\n")
	if res.LogDir != "" {
		b.WriteString("Logs: " + res.LogDir + "\n")
	}
	if res.Report != "" {
		b.WriteString("Report: " + res.Report + "\n")
	}
	w.Write(b.Bytes())
}

// summaryLine is the closing line: the count of each status and the run's duration.
func summaryLine(res *results.Run, paint func(s, sgr string) string) string {
	count := map[results.Status]int{}
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
	for _, s := range []results.Status{results.StatusPruned, results.StatusDiverged, results.StatusPaused, results.StatusIgnored, results.StatusSkipped, results.StatusPending, results.StatusRunning} {
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
	return line
}

// statusColor is each status's SGR code. All are two characters so that every cell of the
// status column grows by the same number of bytes and tabwriter still aligns it.
var statusColor = map[results.Status]string{
	results.StatusOK: "32", results.StatusFailed: "31", results.StatusIgnored: "33", results.StatusSkipped: "90", results.StatusRunning: "36",
	results.StatusStopped: "33", results.StatusPruned: "90", results.StatusPaused: "90",
}

// tableWidth is the width the summary table keeps within when the terminal's is unknown: a
// long task name is cut short rather than wrap every row.
const tableWidth = 80

// writeTaskTable prints one row per command: ranked best first when the run has an
// objective, with the objective's column and the best one marked (with several, a column
// each and their Pareto front, ranked by front: Run.Order); in plan order otherwise.
// The name comes last and is cut to fit the width, so that no row wraps; the full names and
// reasons are in the results and logs.
func writeTaskTable(b *bytes.Buffer, res *results.Run, width int, paint func(s, sgr string) string) {
	tasks, objs := res.Tasks, res.AllObjectives()
	gpus := slices.ContainsFunc(tasks, func(r results.Task) bool {
		return len(r.Devices) > 0 || r.PeakGPUMemory > 0 || r.GPUMemory > 0
	})
	head := []string{"STATUS", "EXIT", "TIME", "TRIES"}
	if gpus {
		head = append(head, "GPU", "NEED/PEAK")
	}
	head = append(head, objectiveHead(objs)...)
	rows := [][]string{append(head, "TASK")}
	for _, i := range res.Order() {
		row := taskRow(tasks[i], gpus)
		// before the name, which stays last
		row = slices.Insert(row, len(row)-1, objectiveCells(res, objs, tasks[i])...)
		rows = append(rows, row)
	}
	cols := len(head)
	widths := make([]int, cols)
	for _, row := range rows {
		for i := range cols {
			widths[i] = max(widths[i], displayWidth(row[i]))
		}
	}
	used := 0
	for _, w := range widths {
		used += w + 2
	}
	nameWidth := max(width-used, 12) // past this, a row wraps rather than lose its name
	for i, row := range rows {
		var line strings.Builder
		for c := range cols {
			cell := row[c] + strings.Repeat(" ", widths[c]-displayWidth(row[c])+2)
			if c == 0 { // paint after padding: escape codes take no columns
				sgr := "01"
				if i > 0 {
					sgr = statusSGR(results.Status(row[0]))
				}
				cell = paint(row[0], sgr) + strings.Repeat(" ", widths[c]-displayWidth(row[c])+2)
			}
			line.WriteString(cell)
		}
		line.WriteString(truncateWidth(row[cols], nameWidth))
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func statusSGR(s results.Status) string {
	if sgr, ok := statusColor[s]; ok {
		return sgr
	}
	return "39"
}

// taskRow is a task's cells: status, exit code, time, attempts, [device, need/peak,] name.
func taskRow(r results.Task, gpus bool) []string {
	exit, took, attempts := "-", "-", "-"
	if r.Attempts > 0 || !r.StartedAt.IsZero() {
		exit, attempts = strconv.Itoa(r.ExitCode), strconv.Itoa(r.Attempts)
	}
	if r.Status == results.StatusPruned || r.Status == results.StatusSkipped {
		// runall ended it (its SIGTERM's code says nothing), or it did not end here: a
		// skipped trial that ran here before (paused, then ended by another runall) has none.
		exit = "-"
	}
	if d := r.Duration(); d > 0 {
		took = humanDuration(d)
	}
	if r.OOMRequeues > 0 {
		attempts += fmt.Sprintf(" (%d OOM)", r.OOMRequeues)
	}
	cells := []string{string(r.Status), exit, took, attempts}
	if gpus {
		cells = append(cells, gpuCells(r)...)
	}
	name := cleanName(r.Name)
	if why := extraReason(r.Reason, r.ExitCode); why != "" && r.Status != results.StatusOK {
		name += " (" + cleanName(why) + ")"
	}
	return append(cells, name)
}

// gpuCells is where a task ran and what it used: "fake-0" or "5f0c1a2b" (the UUID's start
// without its GPU- prefix; "5f0c1a2b+1" for two devices), then its need and peak, the peak
// "~5.1 GiB" where it is an estimate, its share of its device's growth.
func gpuCells(r results.Task) []string {
	dev, need, peak := "", "", ""
	if len(r.Devices) > 0 {
		dev = strings.TrimPrefix(shortDevice(r.Devices[0]), "GPU-")
	}
	if len(r.Devices) > 1 { // the results list them all
		dev += fmt.Sprintf("+%d", len(r.Devices)-1)
	}
	if r.GPUMemory > 0 {
		need = size.Format(r.GPUMemory)
	}
	if r.PeakGPUMemory > 0 {
		if r.PeakEstimated() {
			peak = "~"
		}
		peak += size.Format(r.PeakGPUMemory)
	}
	return []string{dev, needPeak(need, peak)}
}

// needPeak puts a need and a peak in one cell, the unit once where they share it:
// "7.0/5.0 GiB", "7.0 GiB/-".
func needPeak(need, peak string) string {
	switch {
	case need == "" && peak == "":
		return ""
	case need == "":
		need = "-"
	case peak == "":
		peak = "-"
	}
	nv, nu, _ := strings.Cut(need, " ")
	_, pu, _ := strings.Cut(peak, " ")
	if nu != "" && nu == pu {
		need = nv
	}
	return need + "/" + peak
}

// writeFailure is one failed task's report: both streams' last lines (bashful shows only
// stderr, but Python tracebacks and framework errors land on either) and its log file.
func writeFailure(b *bytes.Buffer, r results.Task, n int, paint func(s, sgr string) string) {
	head := "failed with " + exitText(r.ExitCode)
	if d := r.Duration(); d > 0 {
		head += " in " + humanDuration(d)
	}
	if a := r.Failed(); a != nil {
		head += " (" + a.Class + ")"
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

// objectiveText is a task's value of the objective, "-" when it reported none; the best
// task's is marked.
func objectiveText(o *results.Objective, r results.Task, best bool) string {
	v, ok := o.Value(r)
	if !ok {
		return "-"
	}
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if best {
		s += " (best)"
	}
	return s
}

// writeMetricWarnings lists what could not be read of tasks' metrics.
func writeMetricWarnings(b *bytes.Buffer, tasks []results.Task) {
	for _, r := range tasks {
		for i, w := range r.MetricWarnings {
			if i == 0 {
				fmt.Fprintf(b, "\n%s: metric warnings:\n", cleanName(r.Name))
			}
			b.WriteString("  " + cleanLine(w) + "\n")
		}
	}
}

// writeUploadErrors lists the trials' own uploads that failed: the trials are ok, their
// outputs are not all where they were to go, and the run failed for it.
func writeUploadErrors(b *bytes.Buffer, tasks []results.Task) {
	for _, r := range tasks {
		for i, e := range r.UploadErrors {
			if i == 0 {
				fmt.Fprintf(b, "\n%s: its upload failed (the run fails; run it again once the destination takes it):\n", cleanName(r.Name))
			}
			b.WriteString("  " + cleanLine(e) + "\n")
		}
	}
}
