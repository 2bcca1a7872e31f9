package plan

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// -update rewrites the golden files. Registered only if no other test file of the package has
// registered it already, so that several golden tests can share the flag.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func taskfileUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const taskfileDir = "testdata/taskfile"

// checkTaskfileGolden compares got with the golden file, or rewrites it under -update.
func checkTaskfileGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if taskfileUpdate() {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

func taskfileInputs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(taskfileDir, dir, "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no task files in %s: %v", dir, err)
	}
	return files
}

// TestLoadInvalidErrors loads every file under testdata/taskfile/invalid and compares the
// error, which must be a *FileError, with its golden file.
func TestLoadInvalidErrors(t *testing.T) {
	for _, file := range taskfileInputs(t, "invalid") {
		rel, _ := filepath.Rel(taskfileDir, file)
		t.Run(rel, func(t *testing.T) {
			_, err := Load(rel, LoadOptions{Dir: taskfileDir})
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Load: got %v (%T), want a *FileError", err, err)
			}
			for _, p := range fe.Problems {
				if p.Msg == "" || p.Msg[:1] != strings.ToLower(p.Msg[:1]) {
					t.Errorf("problem message %q: want lowercase", p.Msg)
				}
			}
			checkTaskfileGolden(t, strings.TrimSuffix(file, ".yml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

func TestLoadUnreadableFile(t *testing.T) {
	_, err := Load("no-such-file.yml", LoadOptions{Dir: t.TempDir()})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want an error wrapping fs.ErrNotExist", err)
	}
	var fe *FileError
	if errors.As(err, &fe) {
		t.Fatalf("an unreadable file is not a *FileError: %v", err)
	}
}

// loadYAML loads a task file written to a temporary directory, with other files beside it.
func loadYAML(t *testing.T, text string, opts LoadOptions, others ...string) (*Plan, error) {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i+1 < len(others); i += 2 {
		p := filepath.Join(dir, others[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(others[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Dir = dir
	return Load("tasks.yml", opts)
}

func mustLoadYAML(t *testing.T, text string, opts LoadOptions, others ...string) *Plan {
	t.Helper()
	p, err := loadYAML(t, text, opts, others...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p
}

func taskNames(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

func TestExpandForEachAndMatrix(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // names of the trials of the first block
	}{
		{"for-each", `
tasks:
  - parallel-tasks:
      - name: clone <replace>
        cmd: git clone <replace>
        for-each: [a, b, c]
`, []string{"clone a", "clone b", "clone c"}},
		{"for-each unnamed is named by its command", `
tasks:
  - parallel-tasks:
      - cmd: git clone <replace>
        for-each: [a, b]
`, []string{"git clone a", "git clone b"}},
		{"matrix with placeholders in the name", `
tasks:
  - parallel-tasks:
      - name: lr=<lr> bs=<bs>
        cmd: train --lr <lr> --bs <bs>
        matrix:
          lr: [0.1, 0.01, 0.001]
          bs: [32, 64]
`, []string{"lr=0.1 bs=32", "lr=0.1 bs=64", "lr=0.01 bs=32", "lr=0.01 bs=64", "lr=0.001 bs=32", "lr=0.001 bs=64"}},
		{"matrix without placeholders in the name", `
tasks:
  - parallel-tasks:
      - name: train
        cmd: train --lr <lr> --bs <bs>
        matrix:
          lr: [0.1, 0.01]
          bs: [32]
`, []string{"train [lr=0.1 bs=32]", "train [lr=0.01 bs=32]"}},
		{"matrix on a trial of steps", `
tasks:
  - parallel-tasks:
      - name: run <seed>
        matrix: {seed: [1, 2]}
        tasks:
          - cmd: train --seed <seed>
          - cmd: eval --seed <seed>
`, []string{"run 1", "run 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustLoadYAML(t, tt.yaml, LoadOptions{})
			trials := p.Trials()
			if got := taskNames(trials); !slices.Equal(got, tt.want) {
				t.Fatalf("trials %q, want %q", got, tt.want)
			}
			for _, tr := range trials {
				if tr.Group != trials[0].Group || tr.Group == "" {
					t.Errorf("copies of one task must share a group: %q vs %q", tr.Group, trials[0].Group)
				}
				if strings.Contains(tr.Cmd, "<") {
					t.Errorf("placeholder left in %q", tr.Cmd)
				}
				for _, s := range tr.Steps {
					if strings.Contains(s.Cmd, "<") {
						t.Errorf("placeholder left in step %q", s.Cmd)
					}
				}
			}
		})
	}
}

func TestExpandMatrixSubstitutesEverywhere(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - parallel-tasks:
      - name: m=<model>
        cmd: train <model>
        cwd: runs/<model>
        tags: [<model>, all]
        env: {MODEL: <model>, OTHER: x}
        gpu-memory: 3GiB
        upload:
          - from: out/<model>/
            to: s3://b/<model>/
        matrix: {model: [tiny, huge]}
`, LoadOptions{})
	tr := p.Trials()[1]
	if tr.Name != "m=huge" || tr.Cmd != "train huge" || tr.Cwd != "runs/huge" {
		t.Errorf("got name %q cmd %q cwd %q", tr.Name, tr.Cmd, tr.Cwd)
	}
	if !slices.Equal(tr.Tags, []string{"huge", "all"}) {
		t.Errorf("tags %q", tr.Tags)
	}
	if !slices.Equal(tr.Env, []EnvVar{{Name: "MODEL", Value: "huge"}, {Name: "OTHER", Value: "x"}}) {
		t.Errorf("env %v", tr.Env)
	}
	if len(tr.Upload) != 1 || tr.Upload[0].From != "out/huge/" || tr.Upload[0].To != "s3://b/huge/" {
		t.Errorf("upload %+v", tr.Upload)
	}
	if tr.GPU == nil || tr.GPU.Memory != 3<<30 || tr.GPU.Devices != 1 || tr.GPU.Auto {
		t.Errorf("gpu %+v", tr.GPU)
	}
	if p.Trials()[0].Upload[0].From != "out/tiny/" {
		t.Errorf("copies share their upload list")
	}
}

func TestLoadArgs(t *testing.T) {
	const file = `
tasks:
  - cmd: echo $1 $2 $10 -- $*
  - name: named $1
    cmd: "true"
`
	args := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	p := mustLoadYAML(t, file, LoadOptions{Args: args})
	if got, want := p.Tasks[0].Cmd, "echo a b j -- a b c d e f g h i j"; got != want {
		t.Errorf("cmd %q, want %q", got, want)
	}
	if p.Tasks[0].Name != p.Tasks[0].Cmd {
		t.Errorf("an unnamed task is named by its substituted cmd: %q", p.Tasks[0].Name)
	}
	if p.Tasks[1].Name != "named a" {
		t.Errorf("name %q", p.Tasks[1].Name)
	}
	p = mustLoadYAML(t, file, LoadOptions{})
	if got := p.Tasks[0].Cmd; got != "echo $1 $2 $10 -- $*" {
		t.Errorf("without args the cmd is left alone, got %q", got)
	}
}

func TestLoadTags(t *testing.T) {
	const file = `
tasks:
  - name: setup
    cmd: echo setup
    tags: setup
  - name: untagged
    cmd: echo
  - name: block
    tags: train
    parallel-tasks:
      - {name: a, cmd: echo a, tags: fast}
      - {name: b, cmd: echo b}
  - name: mixed
    parallel-tasks:
      - {name: c, cmd: echo c, tags: fast}
      - {name: d, cmd: echo d, tags: slow}
`
	tests := []struct {
		tags []string
		want []string // top-level names, then trial names
	}{
		{nil, []string{"setup", "untagged", "block", "mixed", "a", "b", "c", "d"}},
		{[]string{"setup"}, []string{"setup"}},
		{[]string{"train"}, []string{"block", "a", "b"}},
		{[]string{"fast"}, []string{"block", "mixed", "a", "c"}},
		{[]string{"slow", "setup"}, []string{"setup", "mixed", "d"}},
		{[]string{"nothing"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.tags, ","), func(t *testing.T) {
			p := mustLoadYAML(t, file, LoadOptions{Tags: tt.tags})
			got := append(taskNames(p.Tasks), taskNames(p.Trials())...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
			if len(tt.want) == 0 && len(p.Warnings) != 1 {
				t.Errorf("want a warning when no task is kept, got %v", p.Warnings)
			}
			id := 0
			for _, tk := range p.Tasks {
				id++
				if tk.ID != id {
					t.Errorf("task %q has ID %d, want %d", tk.Name, tk.ID, id)
				}
				for _, c := range tk.Parallel {
					id++
					if c.ID != id {
						t.Errorf("trial %q has ID %d, want %d", c.Name, c.ID, id)
					}
				}
			}
		})
	}
}

func TestLoadIncludeThroughAlias(t *testing.T) {
	p := mustLoadYAML(t, `
$include: common/config.yml
x-apps:
  apps: &apps
    - first
    - $include common/apps.yml
tasks:
  - $include common/tasks.yml
  - parallel-tasks:
      - cmd: build <replace>
        for-each: *apps
  - cmd: deploy <replace>
    for-each: *apps
`, LoadOptions{},
		"common/config.yml", "config:\n  max-parallel-commands: 7\n",
		"common/apps.yml", "- second\n- third\n",
		"common/tasks.yml", "- cmd: setup one\n- cmd: setup two\n",
	)
	if p.Config.MaxParallel != 7 {
		t.Errorf("max parallel %d, want 7 from the included config", p.Config.MaxParallel)
	}
	want := []string{"setup one", "setup two", "", "deploy first", "deploy second", "deploy third"}
	var got []string
	for _, tk := range p.Tasks {
		got = append(got, tk.Cmd)
	}
	if !slices.Equal(got, want) {
		t.Errorf("top-level commands %q, want %q", got, want)
	}
	if got := taskNames(p.Trials()); !slices.Equal(got, []string{"build first", "build second", "build third"}) {
		t.Errorf("trials %q", got)
	}
	if f := p.Tasks[0].Pos.File; f != "common/tasks.yml" {
		t.Errorf("an included task's position names its file, got %q", f)
	}
}

func TestLoadIncludeErrorNamesIncludedFile(t *testing.T) {
	_, err := loadYAML(t, "tasks:\n  - $include more.yml\n", LoadOptions{},
		"more.yml", "- cmd: echo\n  retries: many\n")
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	if got := fe.Problems[0].Pos; got != (Pos{File: "more.yml", Line: 2, Column: 12}) {
		t.Errorf("problem at %s, want more.yml:2:12", got)
	}
}

func TestLoadEnvInheritance(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - env: {A: block, B: block}
    tags: outer
    stop-on-failure: false
    parallel-tasks:
      - cmd: one
        env: {B: child, C: child}
        tags: [inner, outer]
      - cmd: two
        stop-on-failure: true
      - name: steps
        env: {C: trial}
        tasks:
          - cmd: three
            env: {D: step}
`, LoadOptions{})
	tr := p.Trials()
	if want := []EnvVar{{Name: "A", Value: "block"}, {Name: "B", Value: "child"}, {Name: "C", Value: "child"}}; !slices.Equal(tr[0].Env, want) {
		t.Errorf("child env %v, want %v", tr[0].Env, want)
	}
	if want := []EnvVar{{Name: "A", Value: "block"}, {Name: "B", Value: "block"}}; !slices.Equal(tr[1].Env, want) {
		t.Errorf("env %v, want %v", tr[1].Env, want)
	}
	step := tr[2].Steps[0]
	if want := []EnvVar{{Name: "A", Value: "block"}, {Name: "B", Value: "block"}, {Name: "C", Value: "trial"}, {Name: "D", Value: "step"}}; !slices.Equal(step.Env, want) {
		t.Errorf("step env %v, want %v", step.Env, want)
	}
	if !slices.Equal(tr[0].Tags, []string{"inner", "outer"}) || !slices.Equal(step.Tags, []string{"outer"}) {
		t.Errorf("tags %q and %q", tr[0].Tags, step.Tags)
	}
	if tr[0].StopOnFailure || !tr[1].StopOnFailure || step.StopOnFailure {
		t.Errorf("stop-on-failure: the block's explicit false is inherited unless a child says otherwise")
	}
}

func TestLoadConfig(t *testing.T) {
	for _, file := range []string{"tasks:\n  - cmd: echo\n", "config:\ns3:\ntasks:\n  - cmd: echo\n"} {
		if p := mustLoadYAML(t, file, LoadOptions{}); !reflect.DeepEqual(p.Config, DefaultConfig()) || p.S3 != nil {
			t.Errorf("defaults: got %+v, s3 %v", p.Config, p.S3)
		}
	}
	p := mustLoadYAML(t, "tasks:\n  - cmd: echo\n", LoadOptions{})
	if !p.Tasks[0].StopOnFailure || !p.Tasks[0].ShowOutput || p.Tasks[0].IgnoreFailure {
		t.Errorf("task defaults from config: %+v", p.Tasks[0])
	}
	p = mustLoadYAML(t, `
config:
  update-interval: 250
  gpu-memory-margin: 5%, 1GiB
  show-task-output: false
  ignore-failure: true
  bullet-char:
tasks:
  - cmd: echo
`, LoadOptions{})
	c := p.Config
	if c.UpdateInterval != 250*time.Millisecond || c.GPUMemoryMargin != (Margin{Bytes: 1 << 30, Fraction: 0.05}) || c.ShowOutput || !c.IgnoreFailure {
		t.Errorf("config %+v", c)
	}
	if p.Tasks[0].ShowOutput || !p.Tasks[0].IgnoreFailure {
		t.Errorf("task defaults from config: %+v", p.Tasks[0])
	}
	p = mustLoadYAML(t, "config: {update-interval: 1.5s}\ntasks: [{cmd: echo}]\n", LoadOptions{})
	if p.Config.UpdateInterval != 1500*time.Millisecond {
		t.Errorf("update-interval %v", p.Config.UpdateInterval)
	}
}

func TestLoadGPU(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - gpu-memory: 2GiB
    parallel-tasks:
      - cmd: inherits
      - cmd: more devices
        gpus: 4
      - cmd: auto
        gpu-memory: auto
  - parallel-tasks:
      - cmd: gpus alone mean auto
        gpus: 2
      - cmd: none
`, LoadOptions{})
	tr := p.Trials()
	want := []*GPUSpec{
		{Memory: 2 << 30, Devices: 1},
		{Memory: 2 << 30, Devices: 4},
		{Auto: true, Devices: 1},
		{Auto: true, Devices: 2},
		nil,
	}
	for i, w := range want {
		g := tr[i].GPU
		if (g == nil) != (w == nil) || (g != nil && *g != *w) {
			t.Errorf("trial %q: gpu %+v, want %+v", tr[i].Name, g, w)
		}
	}
	if p.Tasks[0].GPU != nil {
		t.Errorf("a block's gpu need is its trials'")
	}
}
