package runner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestWebhookDoesNotFollowRedirects (issue: the webhook follows redirects with its
// secrets): a 307 to another server is a failure that names where it pointed; the other
// server never sees the body or the headers.
func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	var mu sync.Mutex
	var got []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
		mu.Unlock()
	}))
	defer thief.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/steal?x=1", http.StatusTemporaryRedirect)
	}))
	defer hook.Close()
	res, out, err := runFile(t, `
config:
  notify:
    url: `+hook.URL+`/hook
    headers: {Authorization: "Bearer ${NOTIFY_TOKEN}", X-Api-Key: "${NOTIFY_TOKEN}"}
tasks: [{cmd: 'true'}]
`, Options{Environ: []string{"NOTIFY_TOKEN=tok-0123456789"}})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v, want success (a failed notify changes no exit code)\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the redirect's target got %d request(s): %q", len(got), got)
	}
	want := "notify: could not send the results to " + hook.URL + "/… after 1 attempt(s): HTTP 307 Temporary Redirect to " + thief.URL + "/…: redirects are not followed"
	if !strings.Contains(out, want) {
		t.Errorf("want %q in the output:\n%s", want, out)
	}
}
