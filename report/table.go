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
func (p *page) table() {
	p.printf("<section id=\"trials\">\n<h2>Trials</h2>\n")
	if len(p.run.Tasks) == 0 {
		p.printf("<p class=\"note\">No task ran.</p>\n</section>\n")
		return
	}
	p.printf("<p class=\"note\">Click a column to sort by it.")
	if objs := p.run.AllObjectives(); len(objs) > 1 {
		p.printf(" Sorted by Pareto front of %s, each front best first by %s; \u2605 marks the best trial by it.", esc(objectivesText(objs)), esc(objs[0].Metric))
	} else if p.run.Objective != nil {
		p.printf(" Sorted best first by %s (%s); \u2605 marks the best trial.", esc(p.run.Objective.Metric), esc(p.run.Objective.Mode))
	}
	if len(p.run.Tasks) > pageRows {
		p.printf(" %d rows a page.", pageRows)
	}
	// Each column has a key, so that a page that follows the run sorts a new table as the
	// user last sorted the old one, though columns were added meanwhile.
	p.printf("</p>\n<div class=\"wrap\"><table class=\"sortable\">\n<thead><tr>")
	p.printf("<th data-key=\"rank\">#</th><th data-key=\"task\">Task</th><th data-key=\"status\">Status</th>")
	for _, k := range p.params {
		p.printf("<th data-key=\"param %s\">%s</th>", esc(k), esc(k))
	}
	for _, m := range p.metrics {
		p.printf("<th data-key=\"metric %s\">%s</th>", esc(m), esc(m))
	}
	if len(p.run.AllObjectives()) > 1 {
		p.printf("<th data-key=\"front\">Front</th>")
	}
	p.printf("<th data-key=\"time\">Time</th>")
	if p.gpus {
		p.printf("<th data-key=\"gpu\">GPU</th><th data-key=\"peak\">Peak memory</th>")
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for rank, i := range p.order {
		p.row(rank+1, p.run.Tasks[i])
	}
	p.printf("</tbody>\n</table></div>\n<p class=\"pager\" hidden=\"\"></p>\n</section>\n")
}

// pageRows is how many rows of the table a page shows: a browser draws a thousand trials'
// table slowly, and nobody reads it whole; the script pages through the rest.
const pageRows = 100

func (p *page) row(rank int, t results.Task) {
	best := p.run.IsBest(t)
	class := ""
	if best {
		class = " class=\"best\""
	}
	p.printf("<tr data-task=\"%d\"%s>", t.ID, class)
	name := esc(t.Name)
	if best {
		name = "<span class=\"star\">\u2605</span> " + name
	}
	if log := p.logLink(t); log != "" {
		name += " " + log
	}
	p.printf("<td class=\"num\" data-v=\"%d\">%d</td><td data-v=\"%s\" title=\"%s\">%s</td>", rank, rank, esc(t.Name), esc(t.Cmd), name)
	p.statusCell(t)
	for _, k := range p.params {
		v, ok := t.Params[k]
		p.cell(v, esc(v), ok && isNumber(v))
	}
	for _, m := range p.metrics {
		if v, ok := t.Metrics[m]; ok {
			p.cell(fullNum(v), formatNum(v), true)
		} else {
			p.cell("", "", true)
		}
	}
	if len(p.run.AllObjectives()) > 1 {
		p.frontCell(t)
	}
	if d := p.duration(t); d > 0 {
		p.cell(strconv.FormatFloat(d.Seconds(), 'f', 3, 64), humanDuration(d), true)
	} else {
		p.cell("", "", true)
	}
	if p.gpus {
		p.gpuCells(t)
	}
	p.printf("</tr>\n")
}

// gpuCells are a task's devices and the most memory it was seen using.
func (p *page) gpuCells(t results.Task) {
	devices := make([]string, len(t.Devices))
	for i, d := range t.Devices {
		devices[i] = shortDevice(d)
	}
	p.cell(strings.Join(t.Devices, ","), esc(strings.Join(devices, ",")), false)
	peak := cmp.Or(t.PeakGPUMemory, t.PeakHostMemory) // as peakText shows it
	if peak == 0 {
		p.cell("", "", true)
		return
	}
	p.cell(strconv.FormatUint(peak, 10), esc(peakText(t)), true)
}

// statusCell is a task's status: why it waits, which rule pruned it, and, on hover, why it
// failed or was skipped and what its metrics could not be read from.
func (p *page) statusCell(t results.Task) {
	status := statusWord(t.Status)
	if rule := prunedBy(t); rule != "" {
		status += " (" + rule + ")"
	}
	title := t.Reason
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
	case p.run.FinishedAt.IsZero():
		why = "<br/><span class=\"why\">in line: its turn has not come</span>"
	}
	p.printf("<td data-v=\"%s\" title=\"%s\"><span class=\"st %s\">%s</span>%s</td>", esc(string(t.Status)), esc(title), statusClass(t.Status), esc(status), why)
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
func (p *page) logLink(t results.Task) string {
	if t.LogFile == "" || p.run.LogDir == "" || filepath.Dir(t.LogFile) != filepath.Clean(p.run.LogDir) {
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
