package mps

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeControl writes a control program that answers get_server_list with server 4242 and
// get_client_list 4242 with two clients, and fails for any daemon but the one at pipe.
func fakeControl(t *testing.T, pipe string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), Binary)
	script := `#!/bin/sh
[ "$CUDA_MPS_PIPE_DIRECTORY" = "` + pipe + `" ] || { echo "Cannot find MPS control daemon process" >&2; exit 1; }
read cmd
case "$cmd" in
get_server_list) echo 4242 ;;
"get_client_list 4242") printf '100\n101\n' ;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// writeRecord puts a run's RecordFile for uuid under tmp, as an own daemon's start does.
func writeRecord(t *testing.T, tmp, run, uuid string, runPID int) string {
	t.Helper()
	dir := filepath.Join(tmp, "runall-mps-"+run, "0")
	if err := os.MkdirAll(filepath.Join(dir, "pipe"), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(record{UUID: uuid, RunPID: runPID, Run: "/work/" + run + ".yml", Started: time.Now()})
	if err := os.WriteFile(filepath.Join(dir, RecordFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deadPID is the PID of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestFindSaysWhoseDaemonServesEachGPU(t *testing.T) {
	tmp := t.TempDir()
	live := writeRecord(t, tmp, "live", "GPU-a", os.Getpid())
	writeRecord(t, tmp, "stale", "GPU-b", deadPID(t))
	// A link named like runall's directory is no daemon of ours, whatever its record says.
	elsewhere := writeRecord(t, t.TempDir(), "x", "GPU-c", os.Getpid())
	if err := os.Symlink(filepath.Dir(elsewhere), filepath.Join(tmp, "runall-mps-link")); err != nil {
		t.Fatal(err)
	}
	uuids := []string{"GPU-a", "GPU-b", "GPU-c"}
	// Nor is a directory of another user (root can make one; others skip this part).
	theirs := writeRecord(t, tmp, "theirs", "GPU-d", os.Getpid())
	if os.Lchown(filepath.Dir(theirs), 65534, 65534) == nil {
		uuids = append(uuids, "GPU-d")
	}
	bin := fakeControl(t, filepath.Join(live, "pipe"))
	environ := []string{"TMPDIR=" + tmp, "PATH=" + filepath.Dir(bin)}
	got := Find(environ, uuids, State{Control: bin})

	if a := got[0]; a.Daemon != "run" || !a.Answers || a.RunPID != os.Getpid() || a.Run != "/work/live.yml" ||
		len(a.Servers) != 1 || a.Servers[0] != 4242 || a.Clients != 2 || a.Pipe != filepath.Join(live, "pipe") {
		t.Errorf("GPU-a: %+v, want this run's daemon at its pipe, answering: server 4242, 2 clients", a)
	}
	if b := got[1]; b.Daemon != "run" || b.Answers || !strings.Contains(b.Err, "left behind") {
		t.Errorf("GPU-b: %+v, want a run's daemon that does not answer, left behind by a run that ended", b)
	}
	if c := got[2]; c.Daemon != "none" {
		t.Errorf("GPU-c: %+v, want none: the record is reached through a link", c)
	}
	if len(got) == 4 && got[3].Daemon != "none" {
		t.Errorf("GPU-d: %+v, want none: the record is in another user's directory", got[3])
	}
}

func TestFindFallsBackToTheNodesDaemon(t *testing.T) {
	tmp, node := t.TempDir(), t.TempDir()
	bin := fakeControl(t, node)
	environ := []string{"TMPDIR=" + tmp, "PATH=" + filepath.Dir(bin), EnvPipe + "=" + node}
	st := Look(environ)
	if !st.Answers {
		t.Fatalf("Look: %+v, want the node's daemon to answer", st)
	}
	got := Find(environ, []string{"GPU-a"}, st)
	if g := got[0]; g.Daemon != "node" || !g.Answers || g.Pipe != node || g.Clients != 2 {
		t.Errorf("GPU-a: %+v, want the node's daemon at %s, answering with 2 clients", g, node)
	}
	got = Find(environ, []string{"GPU-a"}, State{Control: bin})
	if g := got[0]; g.Daemon != "none" || g.Answers || len(g.Servers) != 0 {
		t.Errorf("GPU-a with no node's daemon: %+v, want none", g)
	}
}
