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

// TestCheckpointSharedThroughLinks (issue 42, point 1, third bullet): two trials whose
// checkpoint: texts differ but reach one directory (through a link to ".", a ".." after a
// link; the directory there or not yet) are refused as sharing it, as two equal texts are;
// two that only read alike are not.
func TestCheckpointSharedThroughLinks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"ck", "real/deep", "real/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"here": ".", "deep": "real/deep"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ a, b, cwdB, want string }{
		{"ck", "here/ck", "", `checkpoint: here/ck is also trial "a"'s`},               // there: one inode
		{"new", "here/new", "", `checkpoint: here/new is also trial "a"'s`},            // not there yet: one path
		{"real/sub", "deep/../sub", "", `checkpoint: deep/../sub is also trial "a"'s`}, // .. after the link
		{"real/x", "../x", "deep", `checkpoint: ../x is also trial "a"'s`},             // cwd: through the link
		{"sub", "deep/../sub", "", ""},                                                 // the text's deep/../sub is sub; the kernel's is real/sub
		{"ck/1", "ck/2", "", ""},
	}
	for _, tt := range tests {
		b := "      - {name: b, cmd: train b, checkpoint: '" + tt.b + "'"
		if tt.cwdB != "" {
			b += ", cwd: '" + tt.cwdB + "'"
		}
		yaml := "tasks:\n  - parallel-tasks:\n      - {name: a, cmd: train a, checkpoint: '" + tt.a + "'}\n" + b + "}\n"
		if err := os.WriteFile(filepath.Join(root, "tasks.yml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load("tasks.yml", LoadOptions{Dir: root})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s and %s: refused: %v", tt.a, tt.b, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), "tasks.yml:4:") || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s and %s: %v, want it refused at tasks.yml:4 saying %q", tt.a, tt.b, err, tt.want)
		}
	}
}

// TestIncludeCycleThroughLink (issue 42, point 1): an include cycle is found by the file
// each name reaches, not its text: a.yml including here/a.yml (here a link to .) is a cycle,
// said as one, not an include repeated until the cap.
func TestIncludeCycleThroughLink(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink(".", filepath.Join(root, "here")); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tasks.yml", "tasks:\n  - $include: a.yml\n")
	write("a.yml", "- cmd: echo a\n- $include: here/a.yml\n")
	_, err := Load("tasks.yml", LoadOptions{Dir: root})
	if err == nil || !strings.Contains(err.Error(), "$include here/a.yml: include cycle: a.yml -> here/a.yml") {
		t.Errorf("got %v, want the cycle through the link said as one", err)
	}
}
