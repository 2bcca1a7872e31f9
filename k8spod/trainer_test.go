package k8spod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/trainertest"
)

// TestTrainerPost: what Send posts is what Kubeflow Trainer v2.2.0 takes (internal/trainertest
// holds it to Trainer's request type and CRD): the endpoint and token from Trainer's own
// variables, the figures as progressPercentage, estimatedRemainingSeconds and metrics, a
// best trial's name beyond 64 characters cut to them; a token Trainer does not authorize is
// a refusal (ErrForbidden).
func TestTrainerPost(t *testing.T) {
	long := "trial " + strings.Repeat("lr=0.001 ", 10)
	p := Progress{Done: 3, Running: 1, Waiting: 4, Best: long, Metric: "loss", Value: "0.125", ETA: 90 * time.Second, Scope: "sweep"}
	for _, tc := range []struct {
		name, token string
		refused     bool
	}{{"taken", "tr4iner", false}, {"refused", "another", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := trainertest.New(t, "sweeps", "tj", "tr4iner")
			env := map[string]string{}
			for _, kv := range s.Env(t, t.TempDir()) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			if tc.refused {
				if err := os.WriteFile(env[EnvTrainerToken], []byte(tc.token), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			tr, err := TrainerFromEnv(func(k string) string { return env[k] })
			if err != nil || tr == nil {
				t.Fatalf("TrainerFromEnv: %v, %v", tr, err)
			}
			err = tr.Send(context.Background(), p)
			if tc.refused {
				if !errors.Is(err, ErrForbidden) || len(s.Posts()) > 0 {
					t.Errorf("a token Trainer refuses: %v, posts %v; want ErrForbidden and none", err, s.Posts())
				}
				return
			}
			if err != nil || len(s.Refused()) > 0 || len(s.Posts()) != 1 {
				t.Fatalf("Send: %v; Trainer refused %q, took %v", err, s.Refused(), s.Posts())
			}
			got := s.Posts()[0]
			if got.ProgressPercentage == nil || *got.ProgressPercentage != 37 ||
				got.EstimatedRemainingSeconds == nil || *got.EstimatedRemainingSeconds != 90 {
				t.Errorf("progressPercentage %v, estimatedRemainingSeconds %v; want 37 (3 of 8) and 90", got.ProgressPercentage, got.EstimatedRemainingSeconds)
			}
			if time.Since(got.LastUpdatedTime) > time.Minute {
				t.Errorf("lastUpdatedTime %v, want now", got.LastUpdatedTime)
			}
			var want []trainertest.Metric
			for _, m := range [][2]string{{"trialsDone", "3"}, {"trialsRunning", "1"}, {"trialsWaiting", "4"}, {"scope", "sweep"},
				{"bestTrial", string([]rune(long)[:63]) + "…"}, {"loss", "0.125"}} {
				want = append(want, trainertest.Metric{Name: m[0], Value: m[1]})
			}
			if !slices.Equal(got.Metrics, want) {
				t.Errorf("metrics %q, want %q", got.Metrics, want)
			}
		})
	}
}

// TestTrainerUnknown: no ETA and no trial known are left out, as Trainer's optional fields
// are; lastUpdatedTime is there still.
func TestTrainerUnknown(t *testing.T) {
	s := trainertest.New(t, "sweeps", "tj", "tok")
	env := map[string]string{}
	for _, kv := range s.Env(t, filepath.Join(t.TempDir(), "trainer")) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	tr, err := TrainerFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Send(context.Background(), Progress{}); err != nil || len(s.Posts()) != 1 {
		t.Fatalf("Send: %v; refused %q", err, s.Refused())
	}
	got := s.Posts()[0]
	if got.ProgressPercentage != nil || got.EstimatedRemainingSeconds != nil || got.LastUpdatedTime.IsZero() {
		t.Errorf("posted %+v, want no percentage, no ETA, a lastUpdatedTime", got)
	}
}
