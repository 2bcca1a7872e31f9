package plan

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/taskfile"
)

// gpu-sharing is a trial's own, else its block's, else config's, else unset (memory), each
// with the place it was written.
func TestLoadGPUSharingInherits(t *testing.T) {
	p := mustLoadYAML(t, `config:
  gpu-sharing: progress
tasks:
  - gpu-memory: 2GiB
    gpu-sharing: memory
    parallel-tasks:
      - cmd: from the block
      - cmd: its own
        gpu-sharing: progress
  - parallel-tasks:
      - cmd: from config
        gpu-memory: 1GiB
      - cmd: no gpu
`, LoadOptions{})
	tr := p.Trials()
	want := []struct {
		mode Sharing
		pos  string
	}{
		{taskfile.SharingMemory, "tasks.yml:5:18"},
		{SharingProgress, "tasks.yml:9:22"},
		{SharingProgress, "tasks.yml:2:16"},
	}
	for i, w := range want {
		s := tr[i].GPU.Sharing
		if s.Mode != w.mode || s.Pos.String() != w.pos {
			t.Errorf("trial %q: gpu-sharing %q at %s, want %q at %s", tr[i].Name, s.Mode, s.Pos, w.mode, w.pos)
		}
	}
	if tr[3].GPU != nil {
		t.Errorf("a trial with no GPU need got one: %+v", tr[3].GPU)
	}
	if p.Config.GPUSharing.Mode != SharingProgress {
		t.Errorf("config gpu-sharing %q", p.Config.GPUSharing.Mode)
	}
	q := mustLoadYAML(t, "tasks:\n  - parallel-tasks:\n      - {cmd: a, gpu-memory: 1GiB}\n", LoadOptions{})
	if s := q.Trials()[0].GPU.Sharing; s != (SharingSpec{}) {
		t.Errorf("unset gpu-sharing: %+v, want the zero value (memory)", s)
	}
}

// A bad value, one on a task that needs no GPU, one on a step: each refused at its place.
func TestLoadGPUSharingErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad value", "config:\n  gpu-sharing: speed\ntasks: [{cmd: a}]\n",
			`tasks.yml:2:16: gpu-sharing: want memory (pack trials while a GPU's memory holds them: the default) or progress`},
		{"a list", "tasks:\n  - {cmd: a, gpu-memory: 1GiB, gpu-sharing: [memory]}\n", `tasks.yml:2:45: gpu-sharing: want memory`},
		{"no gpu on the task", "tasks:\n  - parallel-tasks:\n      - {cmd: a, gpu-sharing: progress}\n",
			"tasks.yml:3:18: gpu-sharing: decides how trials share a GPU, but this task sets neither gpu-memory nor gpus"},
		{"no gpu in the block", "tasks:\n  - gpu-sharing: memory\n    parallel-tasks:\n      - {cmd: a}\n",
			"tasks.yml:2:5: gpu-sharing: decides how trials share a GPU, but none of this block's trials sets gpu-memory or gpus"},
		{"on a step", "tasks:\n  - parallel-tasks:\n      - gpu-memory: 1GiB\n        tasks:\n          - {cmd: a, gpu-sharing: memory}\n",
			"tasks.yml:5:22: gpu-sharing: set GPU needs on the trial that holds the steps, not on a step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.yaml, LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}
