// Package trainertest is an HTTPS stand-in for Kubeflow Trainer's status server, for the
// tests of what runall posts there (k8spod's Trainer, and runall's end-to-end tests). It
// takes a post as Trainer v2.2.0 does and holds it to the shape Trainer's API server then
// validates, read from Trainer's own code at v2.2.0 (commit
// dc7656ad878916f526cd401f30a347574cd47877; the endpoint came with PR #3227, merged as
// 66d0b0bc18696f40c30e32d75831645c3e9616c4):
//   - pkg/statusserver/server.go: `POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status`
//     (utils.go's StatusUrl), the body decoded as trainer.UpdateTrainJobStatusRequest; 403
//     for a token it does not authorize, 422 for a body it cannot decode or the API server
//     refuses, 200 with the request echoed; a request without trainerStatus is answered 200
//     and applied to nothing.
//   - pkg/statusserver/auth.go: the header is exactly `Authorization: Bearer <token>` (split on
//     one space into two parts), the token a projected ServiceAccount token whose audience is
//     trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status.
//   - pkg/apis/trainer/v1alpha1/trainjob_types.go: UpdateTrainJobStatusRequest{trainerStatus}
//     and TrainerStatus{progressPercentage *int32 (0-100), estimatedRemainingSeconds *int32
//     (>= 0), metrics []Metric (at most 256, each name and value 1-64 characters, both
//     required), lastUpdatedTime metav1.Time (RFC 3339; required when trainerStatus is there,
//     the CRD's rule has(self.lastUpdatedTime))}.
//   - pkg/runtime/framework/plugins/trainjobstatus/trainjobstatus.go: the Pod is told the URL,
//     CA and token in KUBEFLOW_TRAINER_SERVER_URL, KUBEFLOW_TRAINER_SERVER_CA_CERT and
//     KUBEFLOW_TRAINER_SERVER_TOKEN (files under /var/run/secrets/kubeflow/trainer).
//
// Stricter than Trainer in one way: JSON names must match exactly (Go's decoder would take
// "TrainerStatus" too); a client that relies on that is wrong anywhere else.
package trainertest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Status is a trainerStatus Trainer took.
type Status struct {
	ProgressPercentage        *int32
	EstimatedRemainingSeconds *int32
	Metrics                   []Metric
	LastUpdatedTime           time.Time
}

// Metric is one of a Status's metrics.
type Metric struct{ Name, Value string }

// Get is the value of the metric named name; false when there is none.
func (s Status) Get(name string) (string, bool) {
	for _, m := range s.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return "", false
}

// Server is Trainer's status server for one TrainJob, with the token it authorizes.
type Server struct {
	srv   *httptest.Server
	path  string
	token string

	mu    sync.Mutex
	posts []Status // the trainerStatus of each post taken
	bad   []string // what each post refused got wrong
}

// New starts Trainer's status server for TrainJob namespace/name, taking posts with token;
// it stops with the test.
func New(t testing.TB, namespace, name, token string) *Server {
	s := &Server{path: fmt.Sprintf("/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/%s/status", namespace, name), token: token}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the TrainJob's status URL, as Trainer gives it in KUBEFLOW_TRAINER_SERVER_URL.
func (s *Server) URL() string { return s.srv.URL + s.path }

// Env writes the token and the server's CA into dir, as Trainer's projected volume holds
// them, and returns the variables Trainer sets in the Pod.
func (s *Server) Env(t testing.TB, dir string) []string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for name, data := range map[string][]byte{"token": []byte(s.token + "\n"), "ca.crt": ca} {
		if err := root.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"KUBEFLOW_TRAINER_SERVER_URL=" + s.URL(), "KUBEFLOW_TRAINER_SERVER_TOKEN=" + filepath.Join(dir, "token"),
		"KUBEFLOW_TRAINER_SERVER_CA_CERT=" + filepath.Join(dir, "ca.crt")}
}

// Posts are the statuses taken so far, in order.
func (s *Server) Posts() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posts)
}

// Refused says what each request refused got wrong.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bad)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != s.path { // the mux's route, and its "/" for the rest
		s.refuse(w, http.StatusNotFound, r.Method+" "+r.URL.Path+": not the TrainJob's status endpoint")
		return
	}
	if parts := strings.Split(r.Header.Get("Authorization"), " "); len(parts) != 2 || parts[0] != "Bearer" || parts[1] != s.token {
		s.refuse(w, http.StatusForbidden, fmt.Sprintf("Authorization %q: want Bearer and the token", r.Header.Get("Authorization")))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16+1))
	if err != nil || len(body) > 1<<16 { // bodySizeLimitMiddleware's 64 kB
		s.refuse(w, http.StatusRequestEntityTooLarge, "body over 64 kB")
		return
	}
	st, ok, err := decode(body)
	if err != nil {
		s.refuse(w, http.StatusUnprocessableEntity, err.Error()+": "+string(body))
		return
	}
	if ok {
		s.posts = append(s.posts, st)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body) // Trainer echoes the request it took
}

func (s *Server) refuse(w http.ResponseWriter, code int, why string) {
	s.bad = append(s.bad, why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "status": "Failure", "message": why, "code": code})
}

// decode reads an UpdateTrainJobStatusRequest and validates it as the TrainJob's CRD does;
// ok is false for a request without trainerStatus (taken, applied to nothing).
func decode(body []byte) (Status, bool, error) {
	var req map[string]json.RawMessage
	if err := strict(body, &req, "trainerStatus"); err != nil {
		return Status{}, false, err
	}
	raw, ok := req["trainerStatus"]
	if !ok || string(raw) == "null" {
		return Status{}, false, nil
	}
	var ts struct {
		ProgressPercentage        *int32            `json:"progressPercentage"`
		EstimatedRemainingSeconds *int32            `json:"estimatedRemainingSeconds"`
		Metrics                   []json.RawMessage `json:"metrics"`
		LastUpdatedTime           *string           `json:"lastUpdatedTime"`
	}
	if err := strict(raw, &ts, "progressPercentage", "estimatedRemainingSeconds", "metrics", "lastUpdatedTime"); err != nil {
		return Status{}, false, fmt.Errorf("trainerStatus: %w", err)
	}
	st := Status{ProgressPercentage: ts.ProgressPercentage, EstimatedRemainingSeconds: ts.EstimatedRemainingSeconds}
	switch {
	case ts.LastUpdatedTime == nil:
		return st, false, fmt.Errorf("trainerStatus: lastUpdatedTime is required when trainerStatus is present")
	case ts.ProgressPercentage != nil && (*ts.ProgressPercentage < 0 || *ts.ProgressPercentage > 100):
		return st, false, fmt.Errorf("trainerStatus.progressPercentage %d: want 0-100", *ts.ProgressPercentage)
	case ts.EstimatedRemainingSeconds != nil && *ts.EstimatedRemainingSeconds < 0:
		return st, false, fmt.Errorf("trainerStatus.estimatedRemainingSeconds %d: want >= 0", *ts.EstimatedRemainingSeconds)
	case len(ts.Metrics) > 256:
		return st, false, fmt.Errorf("trainerStatus.metrics: %d, at most 256", len(ts.Metrics))
	}
	var err error
	if st.LastUpdatedTime, err = time.Parse(time.RFC3339, *ts.LastUpdatedTime); err != nil { // metav1.Time's UnmarshalJSON
		return st, false, fmt.Errorf("trainerStatus.lastUpdatedTime: %w", err)
	}
	for i, raw := range ts.Metrics {
		var m struct{ Name, Value *string }
		if err := strict(raw, &m, "name", "value"); err != nil {
			return st, false, fmt.Errorf("trainerStatus.metrics[%d]: %w", i, err)
		}
		for _, f := range []struct {
			key string
			v   *string
		}{{"name", m.Name}, {"value", m.Value}} {
			if f.v == nil || utf8.RuneCountInString(*f.v) < 1 || utf8.RuneCountInString(*f.v) > 64 {
				return st, false, fmt.Errorf("trainerStatus.metrics[%d].%s: required, 1-64 characters", i, f.key)
			}
		}
		st.Metrics = append(st.Metrics, Metric{*m.Name, *m.Value})
	}
	return st, true, nil
}

// strict decodes data into v, an object whose keys are among names, spelled exactly.
func strict(data []byte, v any, names ...string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	for k := range keys {
		if !slices.Contains(names, k) {
			return fmt.Errorf("unknown field %q (want %s)", k, strings.Join(names, ", "))
		}
	}
	return json.Unmarshal(data, v)
}
