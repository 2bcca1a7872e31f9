package mps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLeftoversAtOpen: at a run's start, an own daemon whose run is gone and that serves
// clients is left to them (its GPU waits: Waiting); one whose run is gone and that does not
// answer has its directory removed, and no PID of its pid file is signalled; a live run's
// daemon is not touched.
func TestLeftoversAtOpen(t *testing.T) {
	tmp := t.TempDir()
	busy := writeRecord(t, tmp, "busy", "GPU-a", deadPID(t))
	stale := writeRecord(t, tmp, "stale", "GPU-b", deadPID(t))
	// A pid file naming a process that reused the number: a daemon that does not answer
	// is signalled by no PID.
	reused := exec.Command("sleep", "60")
	if err := reused.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reused.Process.Kill(); _ = reused.Wait() }()
	if err := os.WriteFile(filepath.Join(stale, "pipe", PIDFile), []byte(strconv.Itoa(reused.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	live := writeRecord(t, tmp, "live", "GPU-c", os.Getpid())
	bin := fakeControl(t, filepath.Join(busy, "pipe"))
	s := &Set{bin: bin, environ: []string{"TMPDIR=" + tmp, "PATH=" + filepath.Dir(bin)}}
	said := s.reapAtOpen([]string{"GPU-c", "GPU-a"})

	w := s.Waiting()
	if len(w) != 1 || w[0].Index != 1 || w[0].Clients != 2 || w[0].UUID != "GPU-a" {
		t.Errorf("waiting %+v, want GPU-a's daemon (index 1) with 2 clients", w)
	}
	if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
		t.Errorf("the stale run's directory is still there (%v)", err)
	}
	for _, dir := range []string{busy, live} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", dir, err)
		}
	}
	if !alive(reused.Process.Pid) {
		t.Error("the PID in the pid file of a daemon that did not answer was signalled")
	}
	all := strings.Join(said, "\n")
	if !strings.Contains(all, "GPU1: the MPS control daemon left by run pid") || !strings.Contains(all, "still serves 2 client(s)") ||
		!strings.Contains(all, "GPU GPU-b: ") || !strings.Contains(all, "had no clients: stopped") {
		t.Errorf("said %q", said)
	}
}
