package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/size"
)

// The timeline: one row per GPU (and one for tasks that ran on none), each trial a bar from
// its start to its end coloured by outcome, in as many lanes as trials overlapped there;
// under the bars, the device's used memory over time from the samples.

const (
	tlWidth   = 1100 // the whole SVG
	tlLabel   = 190  // the row labels' column
	tlMemH    = 36   // a row's memory strip
	tlAxisH   = 22
	tlRowGap  = 10
	tlMaxBars = 240 // a row's bar area, at most
)

// tlRow is one row of the timeline.
type tlRow struct {
	id, label string // device UUID ("" for no GPU), what the row is called
	total     uint64
	tasks     []results.Task
	samples   []memPoint
}

type memPoint struct {
	t    time.Time
	used uint64
}

func (tl timelineChart) timeline() {
	tl.p.printf("<section id=\"timeline\">\n<h2>Timeline</h2>\n")
	rows := tl.timelineRows()
	t0, t1 := tl.span(rows)
	if len(rows) == 0 || !t1.After(t0) {
		tl.p.printf("<p class=\"note\">No task ran long enough to draw.</p>\n</section>\n")
		return
	}
	tl.legend(rows)
	x := func(t time.Time) float64 {
		return tlLabel + float64(t.Sub(t0))/float64(t1.Sub(t0))*(tlWidth-tlLabel-10)
	}
	var body strings.Builder
	y := 0.0
	for _, r := range rows {
		y += tl.drawRow(&body, r, y, x)
	}
	height := y + tlAxisH
	tl.p.printf("<svg class=\"timeline\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">\n", tlWidth, height, tlWidth, height)
	tl.p.w.WriteString(body.String())
	tl.timeAxis(t0, t1, y, x)
	tl.p.printf("</svg>\n</section>\n")
}

// timelineRows gathers, per device, the tasks that ran there and its samples; devices in
// the samples' order, then the others by UUID; tasks without a GPU last.
func (tl timelineChart) timelineRows() []*tlRow {
	rs := &tlRows{byID: map[string]*tlRow{}}
	rs.sampled(tl.p.samples)
	var devs []string
	for _, t := range tl.p.run.Tasks {
		devs = append(devs, t.Devices...)
	}
	slices.Sort(devs)
	for _, id := range slices.Compact(devs) {
		rs.get(id)
	}
	for _, t := range tl.p.run.Tasks {
		if t.StartedAt.IsZero() || t.Status == results.StatusSkipped {
			continue
		}
		if len(t.Devices) == 0 {
			r := rs.get("")
			r.tasks = append(r.tasks, t)
		}
		for _, d := range t.Devices {
			rs.byID[d].tasks = append(rs.byID[d].tasks, t)
		}
	}
	rows := rs.list
	if r, ok := rs.byID[""]; ok { // no GPU last
		rows = append(slices.DeleteFunc(rows, func(x *tlRow) bool { return x == r }), r)
	}
	for _, r := range rows {
		slices.SortFunc(r.samples, func(a, b memPoint) int { return a.t.Compare(b.t) })
	}
	return rows
}

// tlRows are the timeline's rows as they are gathered, in order and by device UUID.
type tlRows struct {
	list []*tlRow
	byID map[string]*tlRow
}

// get is the row of device id ("": no GPU), added when there is none yet.
func (rs *tlRows) get(id string) *tlRow {
	if r, ok := rs.byID[id]; ok {
		return r
	}
	r := &tlRow{id: id, label: shortDevice(id)}
	if id == "" {
		r.label = "no GPU"
	}
	rs.byID[id] = r
	rs.list = append(rs.list, r)
	return r
}

// sampled adds the samples' devices and what they held. The container's memory goes under
// the tasks on no GPU; merged runs (several Pods) have one container each, which one row
// cannot tell apart: theirs are left out.
func (rs *tlRows) sampled(all []*results.GPUSamples) {
	row := func(id string) (*tlRow, bool) {
		if id != results.ContainerDevice {
			return rs.get(id), true
		}
		if len(all) > 1 {
			return nil, false
		}
		r := rs.get("")
		r.label = "container"
		return r, true
	}
	for _, s := range all {
		for _, d := range s.Devices {
			r, ok := row(d.UUID)
			if !ok {
				continue
			}
			r.total = d.Total
			if d.Name != "" && d.UUID != results.ContainerDevice {
				r.label = shortDevice(d.UUID) + " " + d.Name
			}
		}
		for _, smp := range s.Samples {
			for id, used := range smp.Used {
				if r, ok := row(id); ok {
					r.samples = append(r.samples, memPoint{smp.Time, used})
				}
			}
		}
	}
}

// span is the time the timeline covers: the run's, widened to every task and sample.
func (tl timelineChart) span(rows []*tlRow) (t0, t1 time.Time) {
	t0, t1 = tl.p.run.StartedAt, tl.p.end
	widen := func(a, b time.Time) {
		if !a.IsZero() && (t0.IsZero() || a.Before(t0)) {
			t0 = a
		}
		if b.After(t1) {
			t1 = b
		}
	}
	for _, r := range rows {
		for _, t := range r.tasks {
			widen(t.StartedAt, t.FinishedAt)
		}
		if n := len(r.samples); n > 0 {
			widen(r.samples[0].t, r.samples[n-1].t)
		}
	}
	return t0, t1
}

// drawRow draws one row at y and returns its height.
func (tl timelineChart) drawRow(b *strings.Builder, r *tlRow, y float64, x func(time.Time) float64) float64 {
	lanes := assignLanes(r.tasks, tl.p.end)
	nLanes := 1
	for _, l := range lanes {
		nLanes = max(nLanes, l+1)
	}
	laneH := min(14, max(3, float64(tlMaxBars)/float64(nLanes)))
	barsH := laneH * float64(nLanes)
	memH := 0.0
	if r.id != "" || len(r.samples) > 0 { // a GPU, or the container
		memH = tlMemH
	}
	h := barsH + memH + tlRowGap
	class := "gpu-row"
	if r.id == "" {
		class = "cpu-row"
	}
	fmt.Fprintf(b, "<g class=\"%s\" data-gpu=\"%s\">\n", class, esc(r.id))
	fmt.Fprintf(b, "<title>%s</title>\n", esc(cmpOr(r.id, "tasks on no GPU")))
	fmt.Fprintf(b, "<text x=\"4\" y=\"%.1f\">%s</text>\n", y+min(barsH, 14)-2, esc(truncate(r.label, 30)))
	fmt.Fprintf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", tlLabel, tlWidth-10, y+h-tlRowGap/2, y+h-tlRowGap/2)
	for i, t := range r.tasks {
		end := t.FinishedAt
		if end.IsZero() || end.Before(t.StartedAt) {
			end = tl.p.end
		}
		x0, x1 := x(t.StartedAt), x(end)
		top := y + float64(lanes[i])*laneH
		fmt.Fprintf(b, "<rect class=\"bar %s\" data-task=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%s</title></rect>\n",
			barClass(t.Status), t.ID, x0, top, max(x1-x0, 1), max(laneH-1, 1), esc(tl.barTitle(t)))
		if chars := int((x1 - x0 - 6) / 6); laneH >= 12 && chars >= 4 {
			fmt.Fprintf(b, "<text class=\"barname\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0+3, top+laneH-4, esc(truncate(t.Name, chars)))
		}
	}
	if memH > 0 {
		tl.memoryStrip(b, r, y+barsH+2, memH-4, x)
	}
	b.WriteString("</g>\n")
	return h
}

// barStatuses are the statuses a bar is drawn in, in the legend's order, with what the
// legend says of each.
var barStatuses = []struct {
	status results.Status
	says   string
}{
	{results.StatusOK, "ok"},
	{results.StatusFailed, "failed"},
	{results.StatusIgnored, "failed, ignored"},
	{results.StatusPruned, "pruned by early stopping"},
	{results.StatusPaused, "paused at a checkpoint"},
	{results.StatusStopped, "stopped with runall"},
	{results.StatusRunning, "running"},
}

func barClass(s results.Status) string {
	for _, b := range barStatuses {
		if b.status == s {
			return string(s)
		}
	}
	return "other"
}

// legend says what the bars' colours mean, for the statuses drawn, and what the strips are.
func (tl timelineChart) legend(rows []*tlRow) {
	drawn := map[string]bool{}
	for _, r := range rows {
		for _, t := range r.tasks {
			drawn[barClass(t.Status)] = true
		}
	}
	tl.p.printf("<p class=\"note legend\">Each bar is a task, from its start to its end:")
	for _, b := range barStatuses {
		if drawn[string(b.status)] {
			tl.p.printf(" <span class=\"key %s\"></span>%s", b.status, esc(b.says))
		}
	}
	if drawn["other"] {
		tl.p.printf(" <span class=\"key other\"></span>other")
	}
	tl.p.printf(". The shaded strip under a GPU's bars is its used memory (all processes), from runall's samples")
	if slices.ContainsFunc(rows, func(r *tlRow) bool { return r.id == "" && len(r.samples) > 0 }) {
		tl.p.printf("; under the container's, the container's memory (less the page cache the kernel reclaims first) against its limit")
	}
	tl.p.printf(". Hover for details.</p>\n")
}

func (tl timelineChart) barTitle(t results.Task) string {
	s := fmt.Sprintf("%s\n%s, %s", t.Name, statusWord(t.Status), humanDuration(tl.p.duration(t)))
	if t.Reason != "" {
		s += "\n" + t.Reason
	}
	if t.PeakGPUMemory > 0 {
		s += "\npeak " + size.Format(t.PeakGPUMemory)
	}
	return s
}

// assignLanes puts each task in the lowest lane free at its start.
func assignLanes(tasks []results.Task, runEnd time.Time) []int {
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return tasks[a].StartedAt.Compare(tasks[b].StartedAt) })
	lanes := make([]int, len(tasks))
	var free []time.Time // each lane's end
	for _, i := range order {
		t := tasks[i]
		end := cmp.Or(t.FinishedAt, runEnd)
		lane := slices.IndexFunc(free, func(e time.Time) bool { return !e.After(t.StartedAt) })
		if lane < 0 {
			lane = len(free)
			free = append(free, time.Time{})
		}
		free[lane], lanes[i] = end, lane
	}
	return lanes
}

// memoryStrip draws a device's used memory as an area, at most a point per pixel column
// (the most used in it), so that a week of samples stays a small path.
func (tl timelineChart) memoryStrip(b *strings.Builder, r *tlRow, y, h float64, x func(time.Time) float64) {
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#f6f8fa\"/>\n", tlLabel, y, tlWidth-10-tlLabel, h)
	total := r.total
	for _, s := range r.samples {
		total = max(total, s.used)
	}
	if len(r.samples) == 0 || total == 0 {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\">no memory samples</text>\n", tlLabel+4, y+h/2+4)
		return
	}
	var path strings.Builder
	base := y + h
	fmt.Fprintf(&path, "M%.1f %.1f", x(r.samples[0].t), base)
	col, colMax := -1.0, uint64(0)
	flush := func() {
		if col >= 0 {
			fmt.Fprintf(&path, "L%.1f %.1f", col, base-h*float64(colMax)/float64(total))
		}
	}
	var peak uint64
	for _, s := range r.samples {
		peak = max(peak, s.used)
		c := float64(int(x(s.t)))
		if c != col {
			flush()
			col, colMax = c, 0
		}
		colMax = max(colMax, s.used)
	}
	flush()
	// A device's memory is sampled when it moves: the last sample holds until the end.
	last := r.samples[len(r.samples)-1].used
	end := max(x(tl.p.end), col)
	fmt.Fprintf(&path, "L%.1f %.1fL%.1f %.1fZ", end, base-h*float64(last)/float64(total), end, base)
	fmt.Fprintf(b, "<path class=\"mem\" d=\"%s\"><title>%s: used memory, peak %s of %s</title></path>\n",
		path.String(), esc(cmpOr(r.id, "the container")), size.Format(peak), size.Format(total))
	fmt.Fprintf(b, "<text x=\"4\" y=\"%.1f\">memory, peak %s / %s</text>\n", y+h/2+4, size.Format(peak), size.Format(total))
}

// timeAxis draws ticks at a round interval under the rows, as time since the start.
func (tl timelineChart) timeAxis(t0, t1 time.Time, y float64, x func(time.Time) float64) {
	tl.p.printf("<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", tlLabel, tlWidth-10, y, y)
	span := t1.Sub(t0)
	step := time.Second
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
		step = s
		if span/s <= 10 {
			break
		}
	}
	for d := time.Duration(0); d <= span; d += step {
		tx := x(t0.Add(d))
		tl.p.printf("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			tx, tx, y, y+4, tx, y+16, tickLabel(d))
	}
}

// tickLabel is a time since the start: 0, 45s, 1m30s, 2h, 1h15m.
func tickLabel(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	var s string
	if h := d / time.Hour; h > 0 {
		s += fmt.Sprintf("%dh", h)
	}
	if m := d % time.Hour / time.Minute; m > 0 {
		s += fmt.Sprintf("%dm", m)
	}
	if sec := d % time.Minute / time.Second; sec > 0 {
		s += fmt.Sprintf("%ds", sec)
	}
	return "+" + s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
