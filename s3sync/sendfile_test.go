package s3sync

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// recordingClient stands for the HTTP client: it reads each request's body whole.
type recordingClient struct {
	bodies [][]byte
	status int
}

func (c *recordingClient) Do(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	c.bodies = append(c.bodies, b)
	return &http.Response{StatusCode: c.status, Body: io.NopCloser(strings.NewReader(""))}, nil
}

func TestFileBodyClientSendsTheSection(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fromFile(bytes.NewReader(data), 0, 4, nil) != nil {
		t.Error("fromFile took a body that is no file")
	}
	opt := fromFile(f, 5, 10, nil)
	if opt == nil {
		t.Skip("no sendfile on this system")
	}
	base := &recordingClient{status: 200}
	var sent int64
	o := s3.Options{HTTPClient: base}
	fromFile(f, 5, 10, func(n int64) { sent += n })(&o)
	for attempt := range 2 { // a retry sends the same bytes and counts none twice
		req, _ := http.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader("SDK's body"))
		req.ContentLength = 10
		if _, err := o.HTTPClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if got := string(base.bodies[attempt]); got != "56789abcde" {
			t.Errorf("attempt %d sent %q, want the file's bytes 5 to 15", attempt, got)
		}
	}
	if sent != 10 {
		t.Errorf("progress counted %d bytes, want 10", sent)
	}
	// A request of another length is not the part's: it keeps its own body.
	req, _ := http.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader("other"))
	if _, err := o.HTTPClient.Do(req); err != nil {
		t.Fatal(err)
	}
	if got := string(base.bodies[2]); got != "other" {
		t.Errorf("sent %q, want the request's own body", got)
	}
	// Over TLS the SDK's body goes as it is.
	req, _ = http.NewRequest("PUT", "https://127.0.0.1/b/k", strings.NewReader("SDK's body"))
	req.ContentLength = 10
	if _, err := o.HTTPClient.Do(req); err != nil {
		t.Fatal(err)
	}
	if got := string(base.bodies[3]); got != "SDK's body" {
		t.Errorf("sent %q over https, want the SDK's body", got)
	}
}
