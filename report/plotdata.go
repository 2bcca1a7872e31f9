package report

import (
	"encoding/json"
	"html"
	"math"
	"slices"
	"strconv"

	"github.com/runall/runall/runner/results"
)

// The canvas plots (parallel coordinates, the contour of a pair of parameters, and the
// scatter plots of a large sweep) draw from one block of data on the page, a JSON script
// element the browser never runs: the axes, scaled and ticked here as the SVG charts are,
// and each trial's value on each, column by column (10,000 trials of 8 parameters are
// about 1 MB, a third of it gzipped).

// plotAxis is one axis: a parameter's or an objective's. Its name is as the page shows it
// (plain): the script finds an axis by the name an option of the contour's pair or a
// scatter canvas's data-param holds, which the browser reads as that text; a name with a
// character esc replaces (a control, U+202E) found none, and the contour stayed blank.
type plotAxis struct {
	Name  string     `json:"name"`
	Kind  string     `json:"kind"`           // "param" or "objective"
	Mode  string     `json:"mode,omitempty"` // an objective's: min or max
	Scale string     `json:"scale"`          // "linear", "log", or "cat" (values are indexes into Cats)
	Cats  []string   `json:"cats,omitempty"`
	Lo    float64    `json:"lo"`
	Hi    float64    `json:"hi"`
	Ticks []plotTick `json:"ticks"`
	// Values holds each trial's value, in the order of plotData.IDs; null where it has none.
	Values []*float64 `json:"values"`
}

type plotTick struct {
	V    float64 `json:"v"`
	Text string  `json:"text"`
}

// plotData is what the script draws the canvas plots from.
type plotData struct {
	IDs    []int      `json:"ids"`
	Names  []string   `json:"names"`
	Status []string   `json:"status"`
	Best   int        `json:"best"` // the best trial's ID, 0 for none
	Axes   []plotAxis `json:"axes"`
	// Color is the index of the axis lines are coloured by (the first objective's), -1
	// for none; Better is "max" or "min", which of its ends is best.
	Color  int    `json:"color"`
	Better string `json:"better,omitempty"`
}

// plotTrials are the tasks the plots draw: those with a parameter, ranked.
func (p *page) plotTrials() []results.Task {
	var out []results.Task
	for _, i := range p.order {
		if t := p.run.Tasks[i]; len(t.Params) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// plotData gathers the axes: one per parameter, then one per objective (or the focus
// metric where there is none).
func (sc studyCharts) plotData() plotData {
	trials := sc.p.plotTrials()
	d := plotData{Color: -1, Best: sc.p.run.BestID}
	for _, t := range trials {
		d.IDs = append(d.IDs, t.ID)
		d.Names = append(d.Names, plain(t.Name))
		d.Status = append(d.Status, statusClass(t.Status))
	}
	for _, k := range sc.p.params {
		d.Axes = append(d.Axes, paramAxis(k, trials, slices.Contains(sc.p.run.LogParams, k)))
	}
	objs := sc.p.run.AllObjectives()
	if len(objs) == 0 && sc.p.focus != "" {
		objs = []results.Objective{{Metric: sc.p.focus}}
	}
	for _, o := range objs {
		ax := plotAxis{Name: plain(o.Metric), Kind: "objective", Mode: o.Mode, Scale: "linear"}
		for _, t := range trials {
			ax.Values = append(ax.Values, finite(t.Metrics, o.Metric))
		}
		ax.bounds()
		if d.Color == -1 {
			d.Color, d.Better = len(d.Axes), o.Mode
		}
		d.Axes = append(d.Axes, ax)
	}
	return d
}

func finite(m map[string]float64, k string) *float64 {
	v, ok := m[k]
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// paramAxis is a parameter's axis: a number line (logarithmic when sampled log-uniformly,
// or positive and spanning two decades or more, as the scatter plots are), else its values
// as categories, sorted.
func paramAxis(k string, trials []results.Task, logSampled bool) plotAxis {
	ax := plotAxis{Name: plain(k), Kind: "param", Scale: "linear"}
	numeric, positive := true, true
	for _, t := range trials {
		s, ok := t.Params[k]
		if !ok {
			ax.Values = append(ax.Values, nil)
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		numeric = numeric && err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
		positive = positive && f > 0
		ax.Values = append(ax.Values, &f)
		if !slices.Contains(ax.Cats, s) {
			ax.Cats = append(ax.Cats, s)
		}
	}
	if numeric {
		ax.Cats = nil
		ax.bounds()
		if positive && ax.Lo > 0 && (logSampled || ax.Hi/ax.Lo >= 100) {
			ax.Scale = "log"
			ax.ticked()
		}
		return ax
	}
	ax.Scale = "cat"
	slices.Sort(ax.Cats)
	for i, t := range trials {
		if s, ok := t.Params[k]; ok {
			v := float64(slices.Index(ax.Cats, s))
			ax.Values[i] = &v
		}
	}
	ax.Lo, ax.Hi = 0, float64(max(len(ax.Cats)-1, 0))
	for i, c := range ax.Cats {
		ax.Ticks = append(ax.Ticks, plotTick{V: float64(i), Text: truncate(c, 14)})
	}
	return ax
}

// bounds sets a number line's ends from its values, and its ticks.
func (ax *plotAxis) bounds() {
	first := true
	for _, v := range ax.Values {
		if v == nil {
			continue
		}
		if first {
			ax.Lo, ax.Hi, first = *v, *v, false
		}
		ax.Lo, ax.Hi = math.Min(ax.Lo, *v), math.Max(ax.Hi, *v)
	}
	ax.ticked()
}

func (ax *plotAxis) ticked() {
	s := scale{lo: ax.Lo, hi: ax.Hi, log: ax.Scale == "log"}
	ticks := s.ticks(5)
	if s.log && len(ticks) < 2 { // within a decade: the ends say where the values lie
		ticks = []float64{ax.Lo, ax.Hi}
	}
	ax.Ticks = ax.Ticks[:0]
	for _, v := range ticks {
		ax.Ticks = append(ax.Ticks, plotTick{V: v, Text: formatNum(v)})
	}
}

// dataBlock writes d as a JSON script element the page's script reads and never runs.
// encoding/json escapes "<", ">" and "&", so that the element cannot end early and the page
// stays well-formed XML.
func (sc studyCharts) dataBlock(id string, d any) {
	b, err := json.Marshal(d)
	if err != nil { // plotData holds only finite numbers and strings
		b = []byte("null")
	}
	sc.p.printf("<script type=\"application/json\" id=\"%s\">%s</script>\n", id, b)
}

// plain is s as the page may show it as text: what esc replaces with U+FFFD replaced, and
// nothing escaped (the script shows it as text).
func plain(s string) string { return html.UnescapeString(esc(s)) }
