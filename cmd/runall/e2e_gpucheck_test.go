package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGPUCheckSmoke runs bench/gpu-check.sh's smoke mode (tiny PyTorch models on the CPU,
// admitted on a simulated GPU) with this build, one light trial, and reads its table: a
// makespan one at a time and packed by memory, a rate, and packing by progress either
// measured or said to be not available in this build. It needs bash and a Python with
// PyTorch, and skips without them (about 15 s on 2 busy cores).
func TestGPUCheckSmoke(t *testing.T) {
	t.Parallel()
	python := ""
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", "import torch").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with PyTorch")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "bench", "gpu-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, "--smoke", "--kinds", "light", "--trials", "1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(hermeticEnv(t.TempDir()), "RUNALL="+runallBin, "PYTHON="+python, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gpu-check --smoke: %v\n%s", err, out)
	}
	row := regexp.MustCompile(`(?m)^\| light \| \d+ \| 1024 MiB \| [\d.]+ s \| [\d.]+ s \([\d.]+x\) \| ([^|]+) \|(?: [\d.]+ \|){2,3}$`).FindSubmatch(out)
	if row == nil || !strings.Contains(string(out), "gpu-check on none: --smoke") {
		t.Fatalf("no table row for the light kind:\n%s", out)
	}
	if p := strings.TrimSpace(string(row[1])); p != "not available in this build" && !regexp.MustCompile(`^[\d.]+ s \([\d.]+x\)$`).MatchString(p) {
		t.Errorf("packed by progress: %q", p)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "logs")); err == nil {
		t.Errorf("gpu-check left its logs in the working directory")
	}
}
