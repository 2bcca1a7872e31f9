package runner

import (
	"path"
	"slices"
	"strings"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

// secretPatterns are the variable names whose values are secrets unless the task file says
// more (config mask:). Matched with path.Match against the upper-cased name. A name ending
// in _KEY is a secret only where the word before says so (an API, access, private, signing
// key), so that SORT_KEY or PARTITION_KEY print as they are.
var secretPatterns = []string{
	"*_TOKEN", "*_SECRET*", "*PASSWORD*", "*PASSWD*",
	"*_API_KEY", "*_APIKEY", "*_ACCESS_KEY", "*_PRIVATE_KEY", "*_SIGNING_KEY", "*_AUTH_KEY",
	"*_ENCRYPTION_KEY", "*_CREDENTIALS", "WANDB_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
}

// isSecretName reports whether a variable called name holds a secret: one of the S3
// credentials, a default pattern, or a name or pattern of extra (config mask:).
func isSecretName(name string, extra []string) bool {
	if slices.Contains(s3sync.SecretEnvNames(), name) {
		return true
	}
	upper := strings.ToUpper(name)
	for _, pats := range [][]string{secretPatterns, extra} {
		for _, pat := range pats {
			if ok, _ := path.Match(strings.ToUpper(pat), upper); ok {
				return true
			}
		}
	}
	return false
}

// secretMasker replaces the values of secret variables with "****" in everything runall
// writes: output lines, logs, results. A task that prints its environment leaks nothing.
// Values shorter than 4 bytes are left alone: masking "1" or "yes" would garble every line.
func secretMasker(environ []string, p *plan.Plan) *strings.Replacer {
	var values []string
	add := func(name, value string) {
		if len(value) >= 4 && isSecretName(name, p.Config.Mask) {
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
