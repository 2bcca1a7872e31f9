package live

import (
	"net"
	"strings"
)

// hostAllowed reports whether a request naming host (its Host header, port included) may be
// served. A browser tricked into sending a page's requests to this server under another name
// (DNS rebinding: evil.example resolved to 127.0.0.1) names that other name: it is refused, so
// that no other site's page can read the run. Addresses (127.0.0.1, the Pod's IP, [::1]),
// localhost and *.localhost are always served: a site cannot make a browser send them for its
// own pages. names are the other names to serve (a Service's DNS name, an Ingress's host):
// each exact, ".example.com" for every name under it, or "*" for any.
func hostAllowed(host string, names []string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(hostOnly(host), "[]"), "."))
	if host == "" || net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "*", n == host:
			return true
		case strings.HasPrefix(n, ".") && strings.HasSuffix(host, n):
			return true
		}
	}
	return false
}

// hostOnly is host without its port.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
