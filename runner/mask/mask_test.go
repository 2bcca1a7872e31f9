package mask

import (
	"testing"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

func TestIsSecretName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		want  bool
	}{
		{"AWS_SECRET_ACCESS_KEY", nil, true},
		{"AWS_ACCESS_KEY_ID", nil, true}, // an S3 credential runall itself uses, which the run names
		{"WANDB_API_KEY", nil, true},
		{"HF_TOKEN", nil, true},
		{"GITHUB_TOKEN", nil, true},
		{"DB_PASSWORD", nil, true},
		{"MYSQL_ROOT_PASSWORD", nil, true},
		{"CLIENT_SECRET", nil, true},
		{"SECRET_SAUCE", nil, false}, // *_SECRET* wants a word before
		{"OPENAI_API_KEY", nil, true},
		{"SSH_PRIVATE_KEY", nil, true},
		{"github_token", nil, true}, // names are matched whatever their case
		{"SORT_KEY", nil, false},
		{"PARTITION_KEY", nil, false},
		{"TOKENIZER", nil, false},
		{"LR", nil, false},
		{"COMET_KEY", nil, false},
		{"COMET_KEY", []string{"COMET_KEY"}, true},
		{"MY_LICENCE", []string{"MY_*"}, true},
		{"YOUR_LICENCE", []string{"MY_*"}, false},
	} {
		if got := isSecretName(tc.name, s3sync.SecretEnvNames(), tc.extra); got != tc.want {
			t.Errorf("isSecretName(%q, the S3 names, %q) = %v, want %v", tc.name, tc.extra, got, tc.want)
		}
	}
}

// The masker hides the values of default-pattern names and of config mask: names, from
// the environment and from tasks' env:, and nothing else.
func TestSecretMasker(t *testing.T) {
	p := &plan.Plan{Config: plan.DefaultConfig()}
	p.Config.Mask = []string{"COMET_KEY"}
	p.Tasks = []*plan.Task{{Name: "t", Cmd: "true", Env: []plan.EnvVar{{Name: "HF_TOKEN", Value: "hf_task_value"}}}}
	m := New([]string{"WANDB_API_KEY=wandb-value", "COMET_KEY=comet-value", "SORT_KEY=sort-value", "X=abc"}, nil, p, nil)
	got := m.Replace("wandb-value comet-value hf_task_value sort-value abc")
	if want := "**** **** **** sort-value abc"; got != want {
		t.Errorf("masked %q, want %q", got, want)
	}
}
