package checkprint

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/internal/citest"
	"github.com/runall/runall/runner/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// taskfileDir holds the task files plan's own tests load: the printout of each valid one is
// this package's golden file.
const taskfileDir = "../plan/testdata/taskfile"

// checkTaskfileGolden compares got with the golden file, or rewrites it under -update.
func checkTaskfileGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
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

// mustLoadYAML loads a task file written to a temporary directory.
func mustLoadYAML(t *testing.T, text string, opts plan.LoadOptions) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Dir = dir
	p, err := plan.Load("tasks.yml", opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p
}

// TestWriteValid loads every file under plan's testdata/taskfile/valid and compares what
// Write prints with its golden file under testdata/golden.
func TestWriteValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(taskfileDir, "valid", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no task files in %s/valid: %v", taskfileDir, err)
	}
	for _, file := range files {
		rel, _ := filepath.Rel(taskfileDir, file)
		t.Run(rel, func(t *testing.T) {
			p, err := plan.Load(rel, plan.LoadOptions{Dir: taskfileDir})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var b bytes.Buffer
			Write(&b, p)
			for _, w := range p.Warnings {
				b.WriteString(w.Pos.String() + ": warning: " + w.Msg + "\n")
			}
			checkTaskfileGolden(t, filepath.Join("testdata", "golden", strings.TrimSuffix(filepath.Base(file), ".yml")+".golden"), b.Bytes())
		})
	}
}

func TestWriteEscapesControls(t *testing.T) {
	p := mustLoadYAML(t, "tasks:\n  - name: paint\n    cmd: \"printf '\\e[2J\\r'\"\n", plan.LoadOptions{})
	var b bytes.Buffer
	Write(&b, p)
	if strings.ContainsAny(b.String(), "\x1b\r") || !strings.Contains(b.String(), `$ printf '\x1b[2J\r'`) {
		t.Errorf("describe:\n%q", b.String())
	}
}

// TestCorpusBashful loads bashful's example files, unchanged, from a directory that has the
// example/common-*.yml files they include. All load except 10-bad-values.yml, whose last task
// has nothing to run.
func TestCorpusBashful(t *testing.T) {
	corpus, err := filepath.Abs("../../../shared/bashful-compat")
	if err == nil {
		_, err = os.Stat(corpus)
	}
	if err != nil {
		citest.Unavailable(t, "bashful corpus not found: %v (the checkout needs ../shared beside it)", err)
	}
	dir := t.TempDir()
	commons, _ := filepath.Glob(filepath.Join(corpus, "common-*.yml"))
	if len(commons) == 0 {
		t.Fatal("no common-*.yml in the corpus")
	}
	if err := os.Mkdir(filepath.Join(dir, "example"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range commons {
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "example", filepath.Base(c)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "*.yml"))
	loaded := 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "common-") {
			continue // fragments for $include, not task files
		}
		t.Run(name, func(t *testing.T) {
			p, err := plan.Load(f, plan.LoadOptions{Dir: dir})
			if name == "10-bad-values.yml" {
				var fe *plan.FileError
				if !errors.As(err, &fe) || len(fe.Problems) != 1 {
					t.Fatalf("got %v, want one problem", err)
				}
				p := fe.Problems[0]
				if p.Pos.File != f || p.Pos.Line != 20 || p.Pos.Column != 5 || !strings.Contains(p.Msg, `"no command"`) {
					t.Errorf("got %s: %s, want the \"no command\" task at line 20, column 5", p.Pos, p.Msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(p.Tasks) == 0 {
				t.Fatal("no tasks")
			}
			var b bytes.Buffer
			Write(&b, p)
			if !strings.Contains(b.String(), "setup step") {
				t.Errorf("Describe printed no summary:\n%s", b.String())
			}
			loaded++
		})
	}
	if loaded != 17 {
		t.Errorf("%d corpus files loaded, want 17", loaded)
	}
}
