package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds the task-file loader arbitrary files. Whatever the input, it must not
// panic or hang, must answer with a plan or a *FileError (or a file-system error for an
// $include that cannot be read), and a plan must keep within max-tasks and hold no NUL. Seeds: testdata/fuzz/FuzzLoad and the loader's golden files.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/taskfile/*/*.yml", "testdata/taskfile/include/*.yml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "tasks.yml")
	const maxTasks = 2000 // small, so that an input cannot make one iteration slow
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(path, LoadOptions{Dir: dir, MaxTasks: maxTasks, Args: []string{"a1"}})
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) &&
				!strings.Contains(err.Error(), "cannot read") {
				t.Fatalf("error of an unexpected kind %T: %v", err, err)
			}
			if fe != nil && len(fe.Problems) == 0 {
				t.Fatalf("a FileError without problems: %v", err)
			}
			return
		}
		n := 0
		Walk(p.Tasks, func(task *Task) {
			n++
			// Any NUL is refused (run cannot pass one to the shell); an unnamed task is named
			// by its command, which may span lines, so other control characters can stay.
			if strings.ContainsRune(task.Name+task.Cmd, 0) {
				t.Errorf("task %q holds a NUL", task.Name)
			}
		})
		if n > maxTasks+1 { // the cap counts trials; blocks add one each at most
			t.Errorf("%d tasks, more than max-tasks %d", n, maxTasks)
		}
	})
}
