package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// requestTimeout bounds one attempt; notify.timeout bounds them all.
const requestTimeout = 10 * time.Second

// Masker masks the secrets in a text (mask.Masker): what is said of a failure passes it.
type Masker interface {
	Replace(s string) string
}

// Notifier POSTs the results to config notify's URL; a nil *Notifier (no notify:) sends
// nothing.
type Notifier struct {
	spec  *plan.Notify
	base  []string // the run's environment, which the URL and headers are expanded in
	mask  Masker
	grace time.Duration
}

// New is the notifier of spec (nil: none), its URL and headers expanded in base; after a
// signal it keeps within grace.
func New(spec *plan.Notify, base []string, mask Masker, grace time.Duration) *Notifier {
	if spec == nil {
		return nil
	}
	return &Notifier{spec: spec, base: base, mask: mask, grace: grace}
}

// Send POSTs body, saying how it went through emit (a RunStatus line). After a signal it keeps within the grace period, which is what the
// container's stop leaves runall.
func (nt *Notifier) Send(body []byte, interrupted bool, emit func(event.Event)) {
	if nt == nil {
		return
	}
	n := nt.spec
	say := func(line string) { emit(event.Event{Kind: event.RunStatus, Line: line}) }
	lookup := func(name string) string { v, _ := envlist.Lookup(nt.base, name); return v }
	// An unset or empty variable is an error, never an empty part of the address.
	target, err := plan.ExpandStrictEnv(n.URL, nt.base)
	if err != nil {
		say(fmt.Sprintf("notify: url: %v: not sent", err))
		return
	}
	shown := plan.RedactURL(target)
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		say(fmt.Sprintf("notify: url %s is not an http(s) address after expanding ${VARS}: not sent", nt.mask.Replace(shown)))
		return
	}
	budget := n.Timeout
	if interrupted {
		budget = min(budget, nt.grace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	client := &http.Client{CheckRedirect: refuseRedirect}
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		status, err := postOnce(ctx, client, target, n.Headers, lookup, body)
		if err == nil {
			say(fmt.Sprintf("notify: sent the results to %s (HTTP %d)", shown, status))
			return
		}
		var permanent *permanentError
		retry := !errors.As(err, &permanent)
		deadline, _ := ctx.Deadline()
		if !retry || time.Until(deadline) < wait {
			say(nt.mask.Replace(fmt.Sprintf("notify: could not send the results to %s after %d attempt(s): %v", shown, attempt, err)))
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// permanentError is an answer that asking again will not change (a 4xx other than 408,
// 429), or a request that cannot be made.
type permanentError struct {
	status int
	why    string // when there is no status
}

func (e *permanentError) Error() string {
	switch {
	case e.status == 0:
		return e.why + ": not retried"
	case e.why != "":
		return fmt.Sprintf("HTTP %d %s %s", e.status, http.StatusText(e.status), e.why)
	}
	return fmt.Sprintf("HTTP %d %s: not retried", e.status, http.StatusText(e.status))
}

// postOnce makes one attempt. Its errors never hold the URL, which may carry a token.
func postOnce(ctx context.Context, client *http.Client, target string, headers []plan.EnvVar, lookup func(string) string, body []byte) (int, error) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil { // its text would repeat the URL
		return 0, &permanentError{why: "cannot make the request"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "runall")
	for _, h := range headers {
		// Space around a value is not part of it (RFC 9110, 5.5): a token from a Secret
		// file often ends in a newline.
		v := strings.TrimSpace(os.Expand(h.Value, lookup))
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return 0, &permanentError{why: "header " + h.Name + ": its value holds a control character (a newline inside a variable?)"}
		}
		req.Header.Set(h.Name, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its text repeats the URL
		}
		return 0, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return 0, &permanentError{status: resp.StatusCode, why: redirectWhy(resp)}
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusRequestTimeout:
		return 0, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return 0, &permanentError{status: resp.StatusCode}
}

// refuseRedirect keeps the webhook's answer as it is: a redirect is not followed, so that
// the body and its headers (a token) go only to the address the task file names. Go drops
// Authorization on a redirect to another host, but not X-Api-Key or the body.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// redirectWhy names where a redirect pointed, redacted as the URL is.
func redirectWhy(resp *http.Response) string {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "with no Location: redirects are not followed"
	}
	if u, err := resp.Request.URL.Parse(loc); err == nil {
		loc = u.String()
	}
	return "to " + plan.RedactURL(loc) + ": redirects are not followed"
}
