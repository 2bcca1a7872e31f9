package report

import (
	"strconv"
	"strings"

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
	if p.run.Objective != nil {
		p.printf(" Sorted best first by %s (%s); \u2605 marks the best trial.", esc(p.run.Objective.Metric), esc(p.run.Objective.Mode))
	}
	p.printf("</p>\n<div class=\"wrap\"><table class=\"sortable\">\n<thead><tr><th>#</th><th>Task</th><th>Status</th>")
	for _, k := range p.params {
		p.printf("<th>%s</th>", esc(k))
	}
	for _, m := range p.metrics {
		p.printf("<th>%s</th>", esc(m))
	}
	p.printf("<th>Time</th>")
	if p.gpus {
		p.printf("<th>GPU</th><th>Peak memory</th>")
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for rank, i := range p.order {
		p.row(rank+1, p.run.Tasks[i])
	}
	p.printf("</tbody>\n</table></div>\n</section>\n")
}

func (p *page) row(rank int, t results.Task) {
	best := p.run.IsBest(t)
	if best {
		p.printf("<tr class=\"best\">")
	} else {
		p.printf("<tr>")
	}
	name := esc(t.Name)
	if best {
		name = "<span class=\"star\">\u2605</span> " + name
	}
	p.printf("<td class=\"num\" data-v=\"%d\">%d</td><td data-v=\"%s\" title=\"%s\">%s</td>", rank, rank, esc(t.Name), esc(t.Cmd), name)
	status := string(t.Status)
	if rule := prunedBy(t); rule != "" {
		status += " (" + rule + ")"
	}
	title := t.Reason
	if len(t.MetricWarnings) > 0 {
		title = strings.TrimPrefix(title+"\nmetrics: "+strings.Join(t.MetricWarnings, "\nmetrics: "), "\n")
		status += " \u26A0"
	}
	p.printf("<td data-v=\"%s\" title=\"%s\"><span class=\"st %s\">%s</span></td>", esc(string(t.Status)), esc(title), statusClass(t.Status), esc(status))
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
	if d := t.Duration(); d > 0 {
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
	if t.PeakGPUMemory > 0 {
		approx := ""
		if t.PeakEstimated() {
			approx = "~"
		}
		p.cell(strconv.FormatUint(t.PeakGPUMemory, 10), approx+size.Format(t.PeakGPUMemory), true)
	} else {
		p.cell("", "", true)
	}
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
