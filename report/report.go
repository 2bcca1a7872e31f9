// Package report draws a run's results as one self-contained HTML page: the trials table
// (sortable), a timeline per GPU with its memory over time, the objective's curves per
// epoch and the objective against each hyperparameter. Everything is inline (CSS, SVG and
// a small sorting script); the page fetches nothing and opens offline. It reads results
// (runner/results), never the scheduler.
package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runall/runall/internal/printable"
	"github.com/runall/runall/runner/results"
)

// Input is what a report draws: a run's results (one shard's, or several merged) and the
// GPU memory samples their runs kept.
type Input struct {
	Run     *results.Run
	Samples []*results.GPUSamples
	// Version marks a page served while the run goes on (--serve): its script follows the
	// run, replacing the parts that changed without reloading, and Version tells it which
	// state it shows. 0 is a page written to disk, which follows nothing.
	Version uint64
	// Now is when a running run (no finished_at) is drawn to: its running trials' bars and
	// times end there. Zero: the time of writing.
	Now time.Time
}

// page is the report being written, with what its sections share.
type page struct {
	w       *bufio.Writer
	run     *results.Run
	samples []*results.GPUSamples
	end     time.Time // when the run ended, or now while it runs
	order   []int     // tasks in ranked order
	focus   string    // the metric the charts draw: the objective's, else the first reported
	params  []string  // hyperparameter names, in the order first seen
	metrics []string  // metric names: the focus first, then sorted
	gpus    bool      // some task ran on a GPU: the table has GPU columns
}

// The page's parts, each drawing its sections from the page's state and through its
// printf: the table of trials, the timeline, the curves, and the charts of the study
// (scatter, parallel coordinates, contour, importance, the Pareto front).
type (
	resultsTable  struct{ p *page }
	timelineChart struct{ p *page }
	curveCharts   struct{ p *page }
	studyCharts   struct{ p *page }
)

// maxMetricColumns bounds the table's width when a task reports hundreds of metrics.
const maxMetricColumns = 16

// Write writes the report of in to w.
func Write(w io.Writer, in Input) error {
	if in.Run == nil {
		return fmt.Errorf("report: no results")
	}
	p := &page{w: bufio.NewWriterSize(w, 64<<10), run: in.Run, samples: in.Samples, end: in.Run.FinishedAt}
	if p.end.IsZero() {
		p.end = cmp.Or(in.Now, time.Now())
	}
	p.order = in.Run.Order()
	p.collectNames()
	p.head(in.Version)
	p.summary()
	resultsTable{p}.table()
	studyCharts{p}.parcoords()
	timelineChart{p}.timeline()
	p.sharing()
	curveCharts{p}.curves()
	curveCharts{p}.lineage()
	studyCharts{p}.scatter()
	studyCharts{p}.contour()
	studyCharts{p}.importance()
	studyCharts{p}.front()
	p.logPanel()
	p.printf("<script>%s</script>\n</body>\n</html>\n", script)
	return p.w.Flush()
}

func (p *page) printf(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

// collectNames finds the hyperparameters and metrics the tasks have, the focus metric, and
// whether any task ran on a GPU.
func (p *page) collectNames() {
	seenParam, metrics := map[string]bool{}, map[string]bool{}
	for _, i := range p.order {
		t := p.run.Tasks[i]
		p.gpus = p.gpus || len(t.Devices) > 0 || t.PeakGPUMemory > 0
		for _, k := range slices.Sorted(maps.Keys(t.Params)) {
			if !seenParam[k] {
				seenParam[k] = true
				p.params = append(p.params, k)
			}
		}
		for k := range t.Metrics {
			metrics[k] = true
		}
	}
	names := slices.Sorted(maps.Keys(metrics))
	if o := p.run.Objective; o != nil {
		p.focus = o.Metric
	} else if len(names) > 0 {
		p.focus = names[0]
	}
	if p.focus != "" {
		p.metrics = append(p.metrics, p.focus)
	}
	for _, n := range names {
		if n != p.focus && len(p.metrics) < maxMetricColumns {
			p.metrics = append(p.metrics, n)
		}
	}
}

// head opens the page; a served one (version > 0) says which state of the run it shows.
func (p *page) head(version uint64) {
	title := "runall report"
	if p.run.File != "" {
		title += ": " + p.run.File
	}
	live := ""
	if version > 0 {
		live = fmt.Sprintf(" data-live=\"%d\"", version)
	}
	p.printf("<!DOCTYPE html>\n<html lang=\"en\"%s>\n<head>\n<meta charset=\"utf-8\"/>\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"+
		"<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<p id=\"live\" class=\"meta\" hidden=\"\"></p>\n", live, esc(title), css)
}

// summary is the page's heading: the file, the run, its outcome (or how far it is), the
// best trial so far with its peak memory.
func (p *page) summary() {
	r := p.run
	p.printf("<header id=\"summary\">\n<h1>%s</h1>\n<p class=\"meta\">", esc(cmpOr(r.File, "runall run")))
	var facts []string
	if r.RunID != "" {
		facts = append(facts, "run "+esc(r.RunID))
	}
	if r.Shard != "" {
		facts = append(facts, "shards "+esc(r.Shard))
	}
	facts = append(facts, fmt.Sprintf("<span class=\"st %s\">%s</span>", statusClass(r.Status), esc(string(r.Status))))
	if !r.StartedAt.IsZero() {
		facts = append(facts, "started "+esc(r.StartedAt.Format("2006-01-02 15:04:05 MST")))
	}
	if d := p.end.Sub(r.StartedAt); !r.StartedAt.IsZero() && d > 0 {
		facts = append(facts, tookOrRunning(r)+humanDuration(d))
	}
	facts = append(facts, esc(countLine(r.Tasks)))
	if left, ok, byProgress := eta(r.Tasks, p.end); ok && r.FinishedAt.IsZero() {
		from := " (from the trials ended so far)"
		if byProgress {
			from = " (from the running trials' progress and the trials ended so far)"
		}
		facts = append(facts, "ETA about "+humanDuration(left)+from)
	}
	p.printf("%s</p>\n", strings.Join(facts, " · "))
	if o := r.Objective; o != nil {
		p.printf("<p class=\"meta\">objective: %s %s · %s</p>\n", esc(o.Mode), esc(o.Metric), p.best())
	}
	if r.Stopped != "" {
		p.printf("<p class=\"meta\">%s: the trials not started then were skipped</p>\n", esc(r.Stopped))
	}
	p.gpuHealth()
	p.printf("</header>\n")
}

func tookOrRunning(r *results.Run) string {
	if r.FinishedAt.IsZero() {
		return "running for "
	}
	return "took "
}

// best names the best trial (so far, while the run goes on), its value and its peak memory.
func (p *page) best() string {
	r, o := p.run, p.run.Objective
	so := ""
	if r.FinishedAt.IsZero() {
		so = " so far"
	}
	if r.Best == "" {
		return "no trial that succeeded reported it" + so
	}
	best := "best" + so + ": <strong>" + esc(r.Best) + "</strong>"
	for _, t := range r.Tasks {
		if !r.IsBest(t) {
			continue
		}
		var about []string
		if v, ok := o.Value(t); ok {
			about = append(about, esc(o.Metric)+" "+formatNum(v))
		}
		if peak := peakText(t); peak != "" {
			about = append(about, "peak "+peak)
		}
		if len(about) > 0 {
			best += " (" + strings.Join(about, ", ") + ")"
		}
		break
	}
	return best
}

func countLine(tasks []results.Task) string {
	count := map[results.Status]int{}
	for _, t := range tasks {
		count[t.Status]++
	}
	var parts []string
	for _, s := range []results.Status{results.StatusOK, results.StatusFailed, results.StatusPruned, results.StatusDiverged, results.StatusIgnored,
		results.StatusStopped, results.StatusSkipped, results.StatusRunning, results.StatusPaused, results.StatusPending} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], statusWord(s)))
		}
	}
	return strings.Join(parts, ", ")
}

// statusWord is how the page names a status: a pending trial waits.
func statusWord(s results.Status) string {
	if s == results.StatusPending {
		return "waiting"
	}
	return string(s)
}

// esc makes text safe in HTML text and attributes, and in XML: what runall never shows as
// it is (internal/printable: controls, invalid UTF-8, bidirectional overrides such as
// U+202E, which a name can hide its end with) becomes U+FFFD.
func esc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if printable.Hidden(r, n) {
			if b.Len() == 0 {
				b.WriteString(s[:i])
			}
			b.WriteRune('\uFFFD')
		} else if b.Len() > 0 {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	if b.Len() > 0 {
		s = b.String()
	}
	return html.EscapeString(s)
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func fullNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func statusClass(s results.Status) string {
	switch s {
	case results.StatusOK, results.StatusFailed, results.StatusIgnored, results.StatusSkipped, results.StatusPruned,
		results.StatusRunning, results.StatusPaused, results.StatusStopped:
		return string(s)
	}
	return "other"
}

func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
}

// css is the page's style. It holds no "<" or "&", so that the page is well-formed XML too.
// The sections below the parallel coordinates are rendered only near the view
// (content-visibility), so that a brushing repaints and commits the table and the parallel
// coordinates, and not a timeline of 10,000 bars and a dozen canvases out of sight.
const css = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{margin:2px 0;color:#57606a}.note{color:#57606a;font-size:13px}#live{color:#0969da;font-size:12px}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:left;white-space:nowrap}
th{cursor:pointer;background:#f6f8fa;position:sticky;top:0;user-select:none}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.num{text-align:right}tr.best td{background:#fff8c5}.star{color:#9a6700}tr.hl td{background:#ddf4ff}
.wrap{max-height:640px;overflow:auto;border:1px solid #d0d7de;display:inline-block;max-width:100%}
.pager button{font:inherit;margin:0 4px}a.log{font-size:12px;color:#0969da}
.st{font-weight:600}.st.ok{color:#1a7f37}.st.failed{color:#cf222e}.st.ignored{color:#9a6700}.st.skipped,.st.pruned,.st.other{color:#57606a}
.st.running{color:#0969da}.st.paused{color:#8250df}.st.stopped{color:#bc4c00}.why{color:#57606a;font-size:12px}
svg{display:block;margin:4px 0;font-size:11px;font-family:inherit;max-width:100%;height:auto}
svg text{fill:#57606a}.axis{stroke:#8c959f;stroke-width:1}.grid{stroke:#eaeef2;stroke-width:1}
.bar{stroke:#fff;stroke-width:1}svg text.barname{fill:#fff;font-size:10px;pointer-events:none}.bar.hl{stroke:#1f2328;stroke-width:2}
.bar.ok,.key.ok{fill:#2da44e;background:#2da44e}.bar.failed,.key.failed{fill:#cf222e;background:#cf222e}
.bar.ignored,.key.ignored{fill:#d4a72c;background:#d4a72c}.bar.pruned,.key.pruned{fill:#8c959f;background:#8c959f}
.bar.paused,.key.paused{fill:#c297ff;background:#c297ff}.bar.stopped,.key.stopped{fill:#fb8f44;background:#fb8f44}
.bar.running,.key.running,.bar.other,.key.other{fill:#54aeff;background:#54aeff}
.key{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;vertical-align:-1px}
.mem{fill:#ddf4ff;stroke:#54aeff;stroke-width:1}
.curve{fill:none;stroke:#8c959f;stroke-opacity:.55;stroke-width:1.2}.curve.best{stroke:#bf3989;stroke-opacity:1;stroke-width:2.5}.curve.pruned{stroke-dasharray:3 2}
.resumed{fill:#fff;stroke:#0969da;stroke-width:1.5}.donor{fill:none;stroke:#fff;stroke-width:2.5;stroke-dasharray:2 3}
.forecast line{stroke:#8250df;stroke-width:1.2}.forecast .path{stroke-dasharray:4 3;stroke-opacity:.7}.forecast .band{stroke-width:4;stroke-opacity:.45;stroke-linecap:round}.forecast.stop line{stroke:#cf222e}.forecast.pause line{stroke:#bf8700}
.curve.one{fill:#8c959f;fill-opacity:.8;stroke:none}.curve.one.best{fill:#bf3989}.curve.hl{stroke:#0969da;stroke-opacity:1;stroke-width:3}.curve.one.hl{fill:#0969da;stroke:none}
.pt{fill:#0969da;fill-opacity:.6}.pt.best{fill:#bf3989;fill-opacity:1}.pt.failed{fill:#cf222e}.pt.running{fill:#fff;stroke:#0969da;stroke-width:1.5}.pt.hl{fill:#1f2328;fill-opacity:1;stroke:#0969da;stroke-width:3}
.charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}figcaption{font-size:13px}
.imp{fill:#0969da;fill-opacity:.75}.pt.front{fill:#bf3989;fill-opacity:1}.frontline{fill:none;stroke:#bf3989;stroke-width:1.5}
canvas{display:block;margin:4px 0;max-width:100%;height:auto}.layered{position:relative;display:inline-block;max-width:100%;vertical-align:top}.layered canvas{position:absolute;left:0;top:0;margin:0;width:100%}canvas.parcoords{cursor:crosshair}
.stack{position:relative;display:inline-block;max-width:100%;vertical-align:top}.stack canvas{margin:0}.stack canvas+canvas{position:absolute;left:0;top:0;width:100%;height:100%}.stack canvas.parcoords{position:relative;z-index:1}.stack canvas.faded{opacity:.12}
#timeline,#sharing,#curves,#lineage,#params,#contour,#importance,#front{content-visibility:auto;contain-intrinsic-size:auto 600px}svg .out{display:none}
.key.failed{background:#cf222e}.key.ramp{width:30px;background:linear-gradient(90deg,#54aeff,#0969da,#8250df,#bf3989)}#contour label{margin-right:12px}
#log pre{max-height:480px;overflow:auto;background:#f6f8fa;border:1px solid #d0d7de;padding:8px;font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap}
`
