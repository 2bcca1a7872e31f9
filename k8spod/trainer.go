package k8spod

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Trainer posts a sweep's progress to Kubeflow Trainer's status endpoint, in the shape of
// its TrainJob progress (KEP-2779, Trainer v2.2.0): status.trainerStatus of the TrainJob.
type Trainer struct {
	URL       string
	TokenFile string // read at each post: the projected token is rotated
	HTTP      *http.Client
}

// TrainerFromEnv is the endpoint Trainer's controller tells a Pod of: KUBEFLOW_TRAINER_STATUS_URL,
// with KUBEFLOW_TRAINER_STATUS_TOKEN and KUBEFLOW_TRAINER_STATUS_CA_CERT naming files; nil
// when the URL is unset.
func TrainerFromEnv(getenv func(string) string) (*Trainer, error) {
	u := getenv("KUBEFLOW_TRAINER_STATUS_URL")
	if u == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(getenv("KUBEFLOW_TRAINER_STATUS_CA_CERT"))
	if err != nil {
		return nil, fmt.Errorf("KUBEFLOW_TRAINER_STATUS_CA_CERT: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("KUBEFLOW_TRAINER_STATUS_CA_CERT: no certificate")
	}
	return &Trainer{URL: u, TokenFile: getenv("KUBEFLOW_TRAINER_STATUS_TOKEN"), HTTP: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

type trainerMetric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type trainerStatus struct {
	ProgressPercentage        *int32          `json:"progressPercentage,omitempty"`
	EstimatedRemainingSeconds *int32          `json:"estimatedRemainingSeconds,omitempty"`
	Metrics                   []trainerMetric `json:"metrics,omitempty"`
	LastUpdatedTime           string          `json:"lastUpdatedTime"`
}

// Send posts p: the share of the sweep's tasks done as progressPercentage, the ETA as
// estimatedRemainingSeconds, the counts and the best value as metrics.
func (t *Trainer) Send(ctx context.Context, p Progress) error {
	st := trainerStatus{LastUpdatedTime: time.Now().UTC().Format(time.RFC3339),
		Metrics: []trainerMetric{{"trialsDone", strconv.Itoa(p.Done)}, {"trialsRunning", strconv.Itoa(p.Running)},
			{"trialsWaiting", strconv.Itoa(p.Waiting)}}}
	if all := p.Done + p.Running + p.Waiting; all > 0 {
		pct := int32(p.Done * 100 / all)
		st.ProgressPercentage = &pct
	}
	if p.ETA > 0 {
		s := int32(p.ETA.Round(time.Second) / time.Second)
		st.EstimatedRemainingSeconds = &s
	}
	if p.Best != "" {
		st.Metrics = append(st.Metrics, trainerMetric{"bestTrial", p.Best})
		if p.Metric != "" {
			st.Metrics = append(st.Metrics, trainerMetric{p.Metric, p.Value})
		}
	}
	body, err := json.Marshal(map[string]any{"trainerStatus": st})
	if err != nil {
		return err
	}
	token, err := os.ReadFile(t.TokenFile)
	if err != nil {
		return fmt.Errorf("KUBEFLOW_TRAINER_STATUS_TOKEN: %w", err)
	}
	return send(ctx, t.HTTP, http.MethodPost, t.URL, "application/json", strings.TrimSpace(string(token)), body)
}
