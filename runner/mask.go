package runner

import (
	"slices"
	"strings"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

// secretMasker replaces the values of credential variables with "****" in everything runall
// writes: output lines, logs, results. A task that prints its environment leaks nothing.
func secretMasker(environ []string, p *plan.Plan) *strings.Replacer {
	names := s3sync.SecretEnvNames()
	var values []string
	add := func(name, value string) {
		if slices.Contains(names, name) && len(value) >= 4 {
			values = append(values, value)
		}
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		add(k, v)
	}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		for _, e := range t.Env {
			add(e.Name, e.Value)
		}
	})
	values = append(values, notifySecrets(environ, p)...)
	// Longest first, so that a secret containing another is masked whole.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range slices.Compact(values) {
		pairs = append(pairs, v, "****")
	}
	return strings.NewReplacer(pairs...)
}
