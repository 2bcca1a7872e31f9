package notify

import (
	"net/url"
	"os"
	"strings"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/plan"
)

// Secrets are the values config notify (n; nil: none) must not show, for mask.New: header values (whole, and
// each word of them, for "Bearer TOKEN") and the variables they name; the URL's password,
// query values, and the variables it names outside its origin (a token in its path: a
// variable holding the scheme and host, ${HOOK_URL}/hook, is an address, shown as one); and
// the whole URL when it holds any of those.
func Secrets(environ []string, n *plan.Notify) []string {
	if n == nil {
		return nil
	}
	var out []string
	add := func(v string, least int) {
		if len(v) >= least {
			out = append(out, v)
		}
	}
	var named []string
	lookup := func(name string) string {
		v, _ := envlist.Lookup(environ, name)
		named = append(named, strings.TrimSpace(v)) // a Secret file's newline is not the secret
		return v
	}
	for _, h := range n.Headers {
		v := strings.TrimSpace(os.Expand(h.Value, lookup))
		add(v, 4)
		for _, w := range strings.Fields(v) {
			add(w, 8)
		}
	}
	for _, v := range named {
		add(v, 4)
	}
	named = nil
	target := os.Expand(n.URL, lookup)
	u, err := url.Parse(target)
	if err != nil {
		return append(out, target)
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		add(pw, 4)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v, 4)
		}
	}
	origin := u.Scheme + "://" + u.Host
	for _, v := range named {
		if !strings.Contains(origin, v) {
			add(v, 8) // short values (a port) are no secret, and would mask too much
		}
	}
	if u.User != nil || u.RawQuery != "" || len(named) > 0 {
		add(target, 4)
	}
	return out
}
