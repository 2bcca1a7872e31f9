package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointUnderLinkedWorkingDir (issue 42, point 1, second bullet): under a working
// directory that is a link (root/link to root/real/deep, PWD the link), checkpoint: and cwd:
// are taken against the directory the link leads to before their ".." is: ../deep is the
// working directory itself (the text says root/deep) and is refused; ../sub is root/real/sub,
// a directory of the trial's own, whatever root/sub (the text's) is.
func TestCheckpointUnderLinkedWorkingDir(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "real", "deep")
	for _, d := range []string{filepath.Join(deep, "work"), filepath.Join(root, "deep"), filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(deep, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(link)
	t.Setenv("PWD", link) // os.Getwd answers the link's path, as under a shell that cd'd there
	environ := []string{"HOME=" + filepath.Join(root, "home"), "PWD=" + link}
	tests := []struct{ dir, cwd, want string }{
		{"../deep", "", "is runall's working directory (" + deep + ")"},
		{"../../real", "", "is a parent of"},
		{"../../deep", "../deep/work", "is runall's working directory"}, // cwd: ../deep/work is real/deep/work, not root/deep/work
		{"../../deep", "work", "is runall's working directory"},
		{"../sub", "", ""},
		{"../../deep/ck", "", ""}, // root/deep/ck: the text's root/deep would be a parent of it; the kernel's is root/real's sibling
	}
	for _, tt := range tests {
		yaml := "tasks:\n  - parallel-tasks:\n      - cmd: train\n        checkpoint: '" + tt.dir + "'\n"
		if tt.cwd != "" {
			yaml += "        cwd: '" + tt.cwd + "'\n"
		}
		if err := os.WriteFile("tasks.yml", []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load("tasks.yml", LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.dir, err)
		}
		err = p.CheckCheckpointDirs(environ, ".runall/logs")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkpoint: %s (cwd %q): refused: %v", tt.dir, tt.cwd, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkpoint: %s (cwd %q): %v, want it refused saying %q", tt.dir, tt.cwd, err, tt.want)
		}
	}
}
