package report

import (
	"cmp"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/size"
)

// table is the trials table: every task, best first by the objective, sortable by any
// column (a click sorts by it; another reverses).
func (tb resultsTable) table() {
	tb.p.printf("<section id=\"trials\">\n<h2>Trials</h2>\n")
	if len(tb.p.run.Tasks) == 0 {
		tb.p.printf("<p class=\"note\">No task ran.</p>\n</section>\n")
		return
	}
	tb.p.printf("<p class=\"note\">Click a column to sort by it.")
	if objs := tb.p.run.AllObjectives(); len(objs) > 1 {
		tb.p.printf(" Sorted by Pareto front of %s, each front best first by %s; \u2605 marks the best trial by it.", esc(objectivesText(objs)), esc(objs[0].Metric))
	} else if tb.p.run.Objective != nil {
		tb.p.printf(" Sorted best first by %s (%s); \u2605 marks the best trial.", esc(tb.p.run.Objective.Metric), esc(tb.p.run.Objective.Mode))
	}
	if len(tb.p.run.Tasks) > pageRows {
		tb.p.printf(" %d rows a page.", pageRows)
	}
	// Each column has a key, so that a page that follows the run sorts a new table as the
	// user last sorted the old one, though columns were added meanwhile.
	tb.p.printf("</p>\n<div class=\"wrap\"><table class=\"sortable\">\n<thead><tr>")
	tb.p.printf("<th data-key=\"rank\">#</th><th data-key=\"task\">Task</th><th data-key=\"status\">Status</th>")
	for _, k := range tb.p.params {
		tb.p.printf("<th data-key=\"param %s\">%s</th>", esc(k), esc(k))
	}
	for _, m := range tb.p.metrics {
		tb.p.printf("<th data-key=\"metric %s\">%s</th>", esc(m), esc(m))
	}
	if len(tb.p.run.AllObjectives()) > 1 {
		tb.p.printf("<th data-key=\"front\">Front</th>")
	}
	tb.p.printf("<th data-key=\"time\">Time</th>")
	if tb.p.gpus {
		tb.p.printf("<th data-key=\"gpu\">GPU</th><th data-key=\"peak\">Peak memory</th>")
	}
	tb.p.printf("</tr></thead>\n<tbody>\n")
	for rank, i := range tb.p.order {
		tb.row(rank+1, tb.p.run.Tasks[i])
	}
	tb.p.printf("</tbody>\n</table></div>\n<p class=\"pager\" hidden=\"\"></p>\n</section>\n")
}

// pageRows is how many rows of the table a page shows: a browser draws a thousand trials'
// table slowly, and nobody reads it whole; the script pages through the rest.
const pageRows = 100

func (tb resultsTable) row(rank int, t results.Task) {
	best := tb.p.run.IsBest(t)
	class := ""
	if best {
		class = " class=\"best\""
	}
	if rank > pageRows { // the script's first page too, but laid out never, not once before it runs
		class += " hidden=\"\""
	}
	tb.p.printf("<tr data-task=\"%d\"%s>", t.ID, class)
	name := esc(t.Name)
	if best {
		name = "<span class=\"star\">\u2605</span> " + name
	}
	if log := tb.logLink(t); log != "" {
		name += " " + log
	}
	tb.p.printf("<td class=\"num\" data-v=\"%d\">%d</td><td data-v=\"%s\" title=\"%s\">%s</td>", rank, rank, esc(t.Name), esc(t.Cmd), name)
	tb.statusCell(t)
	for _, k := range tb.p.params {
		v, ok := t.Params[k]
		tb.p.cell(v, esc(v), ok && isNumber(v))
	}
	for _, m := range tb.p.metrics {
		if v, ok := t.Metrics[m]; ok {
			tb.p.cell(fullNum(v), formatNum(v), true)
		} else {
			tb.p.cell("", "", true)
		}
	}
	if len(tb.p.run.AllObjectives()) > 1 {
		tb.frontCell(t)
	}
	if d := tb.p.duration(t); d > 0 {
		tb.p.cell(strconv.FormatFloat(d.Seconds(), 'f', 3, 64), humanDuration(d), true)
	} else {
		tb.p.cell("", "", true)
	}
	if tb.p.gpus {
		tb.gpuCells(t)
	}
	tb.p.printf("</tr>\n")
}

// gpuCells are a task's devices and the most memory it was seen using.
func (tb resultsTable) gpuCells(t results.Task) {
	devices := make([]string, len(t.Devices))
	for i, d := range t.Devices {
		devices[i] = shortDevice(d)
	}
	tb.p.cell(strings.Join(t.Devices, ","), esc(strings.Join(devices, ",")), false)
	peak := cmp.Or(t.PeakGPUMemory, t.PeakHostMemory) // as peakText shows it
	if peak == 0 {
		tb.p.cell("", "", true)
		return
	}
	tb.p.cell(strconv.FormatUint(peak, 10), esc(peakText(t)), true)
}

// statusCell is a task's status: why it waits, which rule pruned it, and, on hover, why it
// failed or was skipped and what its metrics could not be read from.
func (tb resultsTable) statusCell(t results.Task) {
	status := statusWord(t.Status)
	if rule := prunedBy(t); rule != "" {
		status += " (" + rule + ")"
	}
	status += failedClass(t)
	title := strings.TrimPrefix(t.Reason+"\n"+attemptsText(t), "\n")
	if len(t.MetricWarnings) > 0 {
		title = strings.TrimPrefix(title+"\nmetrics: "+strings.Join(t.MetricWarnings, "\nmetrics: "), "\n")
		status += " \u26A0"
	}
	why := ""
	switch {
	case t.Status == results.StatusRunning && t.Progress != nil:
		why = "<br/><span class=\"why\">" + esc(progressText(t.Progress)) + "</span>"
	case t.Status != results.StatusPending:
	case t.Reason != "":
		why = "<br/><span class=\"why\">" + esc(truncate(t.Reason, 60)) + "</span>"
	case tb.p.run.FinishedAt.IsZero():
		why = "<br/><span class=\"why\">in line: its turn has not come</span>"
	}
	tb.p.printf("<td data-v=\"%s\" title=\"%s\"><span class=\"st %s\">%s</span>%s</td>", esc(string(t.Status)), esc(title), statusClass(t.Status), esc(status), why)
}

// peakText is the most GPU memory a task was seen using ("~" when estimated from its
// device), else the most host memory its processes held; "" when neither was measured.
func peakText(t results.Task) string {
	switch {
	case t.PeakGPUMemory > 0 && t.PeakEstimated():
		return "~" + size.Format(t.PeakGPUMemory)
	case t.PeakGPUMemory > 0:
		return size.Format(t.PeakGPUMemory)
	case t.PeakHostMemory > 0:
		return size.Format(t.PeakHostMemory) + " host"
	}
	return ""
}

// duration is how long a task ran, or has run so far while it runs.
func (p *page) duration(t results.Task) time.Duration {
	if t.Status == results.StatusRunning && t.FinishedAt.IsZero() && !t.StartedAt.IsZero() {
		return max(p.end.Sub(t.StartedAt), 0)
	}
	return t.Duration()
}

// logLink links a task's log, which lies beside the report in the run's log directory (a
// relative link, so that it works from disk, from S3, and through a port-forward).
func (tb resultsTable) logLink(t results.Task) string {
	if t.LogFile == "" || tb.p.run.LogDir == "" || filepath.Dir(t.LogFile) != filepath.Clean(tb.p.run.LogDir) {
		return ""
	}
	return fmt.Sprintf("<a class=\"log\" href=\"%s\" data-task=\"%d\">log</a>", esc(url.PathEscape(filepath.Base(t.LogFile))), t.ID)
}

// cell writes one cell: v is what it sorts by, shown what it shows (escaped already).
func (p *page) cell(v, shown string, num bool) {
	class := ""
	if num {
		class = " class=\"num\""
	}
	p.printf("<td%s data-v=\"%s\">%s</td>", class, esc(v), shown)
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// shortDevice shortens a GPU UUID to what tells devices apart: GPU-5f0c1a2b, GPU-fake-0.
func shortDevice(id string) string {
	if rest, ok := strings.CutPrefix(id, "GPU-fake-"); ok {
		index, _, _ := strings.Cut(rest, "-")
		return "GPU-fake-" + index
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
