package taskfile

import (
	"slices"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"gopkg.in/yaml.v3"
)

// The keys of early-stop method forecast (runner/forecast), which only it takes.
var forecastKeys = []string{"min-chance", "pause-below", "families"}

// decodeForecastKey reads one of forecast's own keys into c; false when q is none of them.
func decodeForecastKey(d *Decoder, q Pair, c *earlystop.Config) bool {
	at := Pair{"early-stop: " + q.Name, q.Key, q.Value}
	switch q.Name {
	case "min-chance":
		c.MinChance = decodeFraction(d, at, 0, 0.5, "the chance of ending better than the best below which a trial stops: 0.05 stops one with less than 1 in 20")
	case "pause-below":
		c.PauseBelow = decodeFraction(d, at, 0, 1, "the chance below which a trial with checkpoint: is paused rather than run on (it resumes when no better use of its slot waits)")
	case "families":
		for i, name := range d.StringOrList(at) {
			if !slices.Contains(earlystop.ForecastFamilies, name) {
				node := q.Value
				if q.Value.Kind == yaml.SequenceNode && i < len(q.Value.Content) {
					node = q.Value.Content[i]
				}
				d.Errorf(node, "early-stop: families: %q is not a curve family: want some of %s", name, strings.Join(earlystop.ForecastFamilies, ", "))
				continue
			}
			c.Families = append(c.Families, name)
		}
	default:
		return false
	}
	return true
}

// checkForecast fills in forecast's defaults and refuses what cannot work.
func checkForecast(d *Decoder, p Pair, c *earlystop.Config, seen map[string]*yaml.Node) {
	checkMethodKeys(d, c, seen, slices.Concat(methodKeys[earlystop.ASHA], methodKeys[earlystop.Median], pbtKeys))
	if seen["min-chance"] == nil {
		c.MinChance = earlystop.DefaultMinChance
	}
	switch {
	case seen["pause-below"] == nil:
		c.PauseBelow = max(earlystop.DefaultPauseBelow, c.MinChance) // none paused when min-chance is above it
	case c.PauseBelow > 0 && c.PauseBelow <= c.MinChance:
		d.Errorf(seen["pause-below"], "early-stop: pause-below: %g is not above min-chance %g: no trial would be paused; raise it, or leave it out", c.PauseBelow, c.MinChance)
	}
	switch {
	case seen["max"] == nil:
		d.Errorf(p.Value, "early-stop: forecast needs max: the trials' last step, where their value is forecast (max: 50 for trials of 50 epochs)")
	case c.Max <= c.Grace:
		d.Errorf(seen["max"], "early-stop: max: %d is not above grace %d: no step would be left to decide at", c.Max, c.Grace)
	}
}
