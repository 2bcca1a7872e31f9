// Package k8spod publishes a sweep's progress as its own Pod's annotations, where `kubectl
// get pods -o custom-columns=...` shows it: a JSON merge patch to the API server over plain
// HTTPS with the Pod's ServiceAccount token (no client-go), as the in-cluster config of
// client-go finds it. It knows nothing of tasks: the run tells it the figures.
package k8spod

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Annotation keys: one per figure.
const (
	KeyDone    = "runall.dev/done"
	KeyRunning = "runall.dev/running"
	KeyWaiting = "runall.dev/waiting"
	KeyBest    = "runall.dev/best"
	KeyETA     = "runall.dev/eta"
	KeyScope   = "runall.dev/scope"
)

// Progress is what a Pod says of its sweep.
type Progress struct {
	Done, Running, Waiting int
	Best                   string        // the best trial so far; "" when none
	Metric, Value          string        // the objective's metric and the best trial's value of it
	ETA                    time.Duration // 0 when unknown
	// Scope is what the figures count: "sweep" (every trial, also those other Pods of a
	// claims sweep ran), or "shard I/N" (a fixed shard's trials: no Pod sees the others').
	Scope string
}

// Annotations are p as the Pod's annotations.
func (p Progress) Annotations() map[string]string {
	eta := ""
	if p.ETA > 0 {
		eta = p.ETA.Round(time.Second).String()
	}
	best := p.Best
	if best != "" && p.Metric != "" {
		best += " " + p.Metric + "=" + p.Value
	}
	return map[string]string{KeyDone: strconv.Itoa(p.Done), KeyRunning: strconv.Itoa(p.Running),
		KeyWaiting: strconv.Itoa(p.Waiting), KeyBest: best, KeyETA: eta, KeyScope: p.Scope}
}

// Sink is where a Pod's progress goes: its annotations (Client), Kubeflow Trainer's status
// endpoint (Trainer).
type Sink interface {
	Send(ctx context.Context, p Progress) error
}

// ServiceAccountDir is where the kubelet mounts a Pod's token, CA and namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Client patches one Pod.
type Client struct {
	URL   string // https://HOST:PORT/api/v1/namespaces/NS/pods/NAME
	Token string
	HTTP  *http.Client
}

// ErrForbidden is a patch the API server refused: the ServiceAccount may not patch Pods.
var ErrForbidden = errors.New("forbidden")

// FromEnv is the client of the Pod runall runs in: the API server from
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token, CA and namespace in dir (the
// ServiceAccount's mount), the Pod's name from POD_NAME (the downward API: with hostNetwork
// the host name is the node's), else the host name.
func FromEnv(getenv func(string) string, dir string) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a Kubernetes Pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT unset")
	}
	token, err := os.ReadFile(filepath.Join(dir, "token"))
	if err != nil {
		return nil, fmt.Errorf("no ServiceAccount token (automountServiceAccountToken: true and a ServiceAccount, see docs/kubernetes.md): %w", err)
	}
	ns, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", filepath.Join(dir, "ca.crt"))
	}
	name := getenv("POD_NAME")
	if name == "" {
		if name, err = os.Hostname(); err != nil {
			return nil, err
		}
	}
	u := "https://" + net.JoinHostPort(host, port) + "/api/v1/namespaces/" + strings.TrimSpace(string(ns)) + "/pods/" + name
	return &Client{URL: u, Token: strings.TrimSpace(string(token)), HTTP: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

// Send patches the Pod's annotations with p.
func (c *Client) Send(ctx context.Context, p Progress) error { return c.Patch(ctx, p.Annotations()) }

// Patch sets the Pod's annotations to a (a JSON merge patch: the Pod's other annotations stay).
func (c *Client) Patch(ctx context.Context, a map[string]string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": a}})
	if err != nil {
		return err
	}
	return send(ctx, c.HTTP, http.MethodPatch, c.URL, "application/merge-patch+json", c.Token, body)
}

// send makes one request with body and the bearer token, and says what a refusal or another
// failure answered: ErrForbidden for 401 and 403 (no permission: the caller stops asking).
func send(ctx context.Context, client *http.Client, method, url, contentType, token string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: %s: %s", ErrForbidden, resp.Status, bytes.TrimSpace(msg))
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s %s: %s: %s", strings.ToLower(method), url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// Publish sends what progress says to sink every interval until ctx ends, and once more
// then (the sweep's last figures), unchanged figures skipped; progress is asked with the
// context of that send (it may read a store). It stops at the first refusal
// (ErrForbidden), which it tells say once; other errors it tells say once each time they
// change. what names the sink in what it says.
func Publish(ctx context.Context, sink Sink, what string, every time.Duration, progress func(context.Context) Progress, say func(string)) {
	var last *Progress
	lastErr := ""
	publish := func(ctx context.Context) bool {
		p := progress(ctx)
		if last != nil && *last == p {
			return true
		}
		err := sink.Send(ctx, p)
		switch {
		case errors.Is(err, ErrForbidden):
			say(what + " off: refused (" + err.Error() + "); see docs/kubernetes.md")
			return false
		case err != nil:
			if err.Error() != lastErr {
				say(what + ": " + err.Error())
			}
			lastErr = err.Error()
		default:
			last, lastErr = &p, ""
		}
		return true
	}
	if !publish(ctx) {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			publish(final)
			cancel()
			return
		case <-t.C:
			if !publish(ctx) {
				return
			}
		}
	}
}
