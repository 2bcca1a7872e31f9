// Package bench_test checks the benchmark scripts themselves: a benchmark that cannot
// measure fails, saying why, rather than print empty figures and exit 0.
package bench_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// strippedPath is a directory of links to every program on the usual PATH but the ones left
// out: a machine where they are not installed.
func strippedPath(t *testing.T, leaveOut ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, from := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		entries, _ := os.ReadDir(from)
		for _, e := range entries {
			name := e.Name()
			if slices.Contains(leaveOut, name) {
				continue
			}
			_ = os.Symlink(filepath.Join(from, name), filepath.Join(dir, name)) // the first of a name wins
		}
	}
	return dir
}

// measuresWith matches a script that calls awk or bc.
var measuresWith = regexp.MustCompile(`(^|[\s|($;"'])(awk|bc)(\s|$)`)

// TestBenchWithoutAwkFails: bench/prune.sh printed empty figures and exited 0 where awk was
// missing. Every bench/*.sh that measures with awk or bc fails where they are missing, naming
// what is missing and printing no figure; prune.sh runs against a real runall, one round.
func TestBenchWithoutAwkFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds runall and runs the benchmark scripts")
	}
	bin := filepath.Join(t.TempDir(), "runall")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/runall").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := strippedPath(t, "awk", "gawk", "mawk", "nawk", "original-awk", "busybox", "bc")
	scripts, _ := filepath.Glob("*.sh")
	tried := 0
	for _, script := range scripts {
		body, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if script == "need.sh" || !measuresWith.Match(body) {
			continue
		}
		tried++
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "/bin/bash", script)
		cmd.Env = []string{"PATH=" + path, "HOME=" + t.TempDir(), "RUNALL=" + bin, "RUNALL_BEFORE=" + bin,
			"ROUNDS=1", "N=10", "SHARED=" + t.TempDir()}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		cancel()
		if err == nil {
			t.Errorf("%s exited 0 without awk and bc:\n%s", script, stdout.String())
			continue
		}
		if msg := stderr.String(); !strings.Contains(msg, "missing") || !regexp.MustCompile(`\b(awk|bc)\b`).MatchString(msg) {
			t.Errorf("%s does not say that awk or bc is missing: %v\n%s", script, err, msg)
		}
		if strings.Contains(stdout.String(), "median") {
			t.Errorf("%s printed figures without awk:\n%s", script, stdout.String())
		}
	}
	if tried < 5 {
		t.Errorf("only %d scripts measure with awk or bc: the pattern is wrong", tried)
	}
}
