package taskfile

import "testing"

func TestTaskfileSuggestKey(t *testing.T) {
	tests := []struct{ got, want string }{
		{"cmdd", "cmd"},
		{"cdm", "cmd"},
		{"stop_on_failure", "stop-on-failure"},
		{"paralel-tasks", "parallel-tasks"},
		{"gpu_memory", "gpu-memory"},
		{"frobnicate", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.got, taskKeys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.got, got, tt.want)
		}
	}
}
