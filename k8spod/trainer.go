package k8spod

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Trainer posts a sweep's progress to Kubeflow Trainer's status endpoint, as Trainer
// v2.2.0's code takes it (kubeflow/trainer at dc7656ad878916f526cd401f30a347574cd47877, the
// endpoint from PR #3227: pkg/statusserver/server.go, pkg/apis/trainer/v1alpha1/
// trainjob_types.go, pkg/runtime/framework/plugins/trainjobstatus/trainjobstatus.go): a POST of
// UpdateTrainJobStatusRequest{trainerStatus} to the URL given, with `Authorization: Bearer`
// and the projected token, which Trainer applies as the TrainJob's status.trainerStatus.
// internal/trainertest holds a post to the same shape.
type Trainer struct {
	URL       string // https://SVC:PORT/apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status
	TokenFile string // read at each post: the projected token is rotated (an hour)
	HTTP      *http.Client
}

// The variables Trainer's TrainJobStatus plugin sets in every trainer container (v2.2.0):
// the status URL, and the files of its CA and of the token.
const (
	EnvTrainerURL   = "KUBEFLOW_TRAINER_SERVER_URL"
	EnvTrainerCA    = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
	EnvTrainerToken = "KUBEFLOW_TRAINER_SERVER_TOKEN"
)

// TrainerFromEnv is the endpoint Trainer's controller tells a Pod of (EnvTrainerURL, with
// EnvTrainerCA and EnvTrainerToken naming files); nil when the URL is unset.
func TrainerFromEnv(getenv func(string) string) (*Trainer, error) {
	u := getenv(EnvTrainerURL)
	if u == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(getenv(EnvTrainerCA))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTrainerCA, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New(EnvTrainerCA + ": no certificate")
	}
	return &Trainer{URL: u, TokenFile: getenv(EnvTrainerToken), HTTP: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

// trainerMetric is Trainer's Metric: name and value each 1-64 characters, both required.
type trainerMetric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// trainerStatus is Trainer's TrainerStatus: a percentage 0-100 and seconds >= 0, both
// int32 and left out when unknown; at most 256 metrics; lastUpdatedTime, RFC 3339
// (metav1.Time), required.
type trainerStatus struct {
	ProgressPercentage        *int32          `json:"progressPercentage,omitempty"`
	EstimatedRemainingSeconds *int32          `json:"estimatedRemainingSeconds,omitempty"`
	Metrics                   []trainerMetric `json:"metrics,omitempty"`
	LastUpdatedTime           string          `json:"lastUpdatedTime"`
}

// trainerRequest is Trainer's UpdateTrainJobStatusRequest.
type trainerRequest struct {
	TrainerStatus trainerStatus `json:"trainerStatus"`
}

// trainerRequestOf is p as Trainer takes it at now: the share of the trials done as
// progressPercentage, the ETA as estimatedRemainingSeconds, the counts, the scope, the best
// trial and its value as metrics (a name or value beyond Trainer's 64 characters cut to
// them, an empty one left out: the API server would refuse the whole post).
func trainerRequestOf(p Progress, now time.Time) trainerRequest {
	st := trainerStatus{LastUpdatedTime: now.UTC().Format(time.RFC3339)}
	if all := p.Done + p.Running + p.Waiting; all > 0 {
		pct := int32(int64(p.Done) * 100 / int64(all))
		st.ProgressPercentage = &pct
	}
	if p.ETA > 0 {
		s := int32(min(p.ETA.Round(time.Second)/time.Second, math.MaxInt32))
		st.EstimatedRemainingSeconds = &s
	}
	for _, m := range [][2]string{{"trialsDone", strconv.Itoa(p.Done)}, {"trialsRunning", strconv.Itoa(p.Running)},
		{"trialsWaiting", strconv.Itoa(p.Waiting)}, {"scope", p.Scope}, {"bestTrial", p.Best}, {p.Metric, p.Value}} {
		name, value := cut64(m[0]), cut64(m[1])
		if name != "" && value != "" {
			st.Metrics = append(st.Metrics, trainerMetric{name, value})
		}
	}
	return trainerRequest{st}
}

// cut64 is s cut to Trainer's 64 characters, ending in "…" when cut.
func cut64(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:63]) + "…"
}

// Send posts p.
func (t *Trainer) Send(ctx context.Context, p Progress) error {
	body, err := json.Marshal(trainerRequestOf(p, time.Now()))
	if err != nil {
		return err
	}
	token, err := os.ReadFile(t.TokenFile)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvTrainerToken, err)
	}
	return send(ctx, t.HTTP, http.MethodPost, t.URL, "application/json", strings.TrimSpace(string(token)), body)
}
