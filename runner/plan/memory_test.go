package plan

import (
	"strings"
	"testing"
)

func TestLoadHostMemory(t *testing.T) {
	p := mustLoadYAML(t, `
config:
  memory-margin: 10%, 64MiB
tasks:
  - cmd: prepare
    memory: 1GiB
  - name: sweep
    memory: auto
    parallel-tasks:
      - cmd: train <replace>
        for-each: [1, 2]
      - cmd: sized
        memory: 450MiB
        gpu-memory: 2GiB
  - parallel-tasks:
      - cmd: eval <replace>
        for-each: [a, b]
        memory: auto
      - cmd: none
`, LoadOptions{})
	if p.Config.HostMemoryMargin != (Margin{Bytes: 64 << 20, Fraction: 0.1}) {
		t.Errorf("memory-margin %+v", p.Config.HostMemoryMargin)
	}
	if h := p.Tasks[0].Host; h == nil || h.Memory != 1<<30 || h.Auto {
		t.Errorf("a top-level task's memory: %+v", h)
	}
	tr := p.Trials()
	if len(tr) != 6 {
		t.Fatalf("%d trials, want 6", len(tr))
	}
	sweep, own := tr[0].Host, tr[4].Host
	if sweep == nil || !sweep.Auto || tr[1].Host.Group != sweep.Group {
		t.Errorf("a block's memory: auto is one group's for its trials: %+v %+v", sweep, tr[1].Host)
	}
	if g := tr[2].Host; g == nil || g.Auto || g.Memory != 450<<20 || tr[2].GPU == nil {
		t.Errorf("a trial's own memory: %+v", g)
	}
	if own == nil || !own.Auto || own.Group == sweep.Group || tr[3].Host.Group != own.Group {
		t.Errorf("a for-each task's copies learn together, apart from other blocks: %+v %+v", own, tr[3].Host)
	}
	if tr[5].Host != nil {
		t.Errorf("a trial that says nothing needs nothing: %+v", tr[5].Host)
	}
	if p.Tasks[1].Host != nil {
		t.Errorf("a block's memory is its trials'")
	}
}

func TestLoadHostMemoryErrors(t *testing.T) {
	cases := []struct{ yml, want string }{
		{"tasks: [{cmd: x, memory: lots}]", `tasks.yml:1:26: memory: want the host memory a trial takes, such as 2GiB or 512MiB, or auto, got "lots"`},
		{"tasks: [{cmd: x, memory: 0}]", `memory: want the host memory a trial takes`},
		{"tasks: [{cmd: x, memory: [1GiB]}]", `memory: want the host memory a trial takes`},
		{"tasks:\n  - parallel-tasks:\n      - tasks:\n          - cmd: x\n            memory: 1GiB\n", "tasks.yml:5:13: memory: set the host memory need on the trial that holds the steps"},
		{"config: {memory-margin: -3%}\ntasks: [{cmd: x}]", "memory-margin: want a size (2GiB), a percentage of the container's limit (5%), or both"},
		{"tasks: [{cmd: x, memroy: 1GiB}]", `did you mean "memory"`},
	}
	for _, c := range cases {
		_, err := loadYAML(t, c.yml, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.yml, err, c.want)
		}
	}
}
