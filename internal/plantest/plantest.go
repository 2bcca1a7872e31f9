// Package plantest loads the task files tests write: the text as tasks.yml in a fresh
// directory, loaded as runall loads a file given on its command line.
package plantest

import (
	"os"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// Load writes content as tasks.yml in a fresh temporary directory (the plan's Dir) and
// loads it; an error fails the test.
func Load(t testing.TB, content string) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.WriteFile("tasks.yml", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
