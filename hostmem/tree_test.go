package hostmem

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTreesLaidOut: a procfs with two trials' trees; one process left its group (setsid),
// one has no smaps_rollup (RSS only), one belongs to nobody.
func TestTreesLaidOut(t *testing.T) {
	root := t.TempDir()
	procs := []struct {
		pid, ppid, pgid int
		comm            string
		smaps, status   string
	}{
		{100, 1, 100, "bash", "Rss: 4000 kB\nPss: 3000 kB\n", ""},
		{101, 100, 100, "python (train) x", "Rss:   400000 kB\nPss:   390000 kB\nPss_Anon: 1 kB\n", ""},
		{102, 101, 102, "worker", "Rss: 100000 kB\nPss: 50000 kB\n", ""}, // setsid: its own group, 100's descendant
		{200, 1, 200, "bash", "", "Name:\tbash\nVmRSS:\t  2048 kB\n"},
		{201, 200, 200, "sleep", "Rss: 1024 kB\nPss: 512 kB\n", ""},
		{300, 1, 300, "other", "Rss: 999999 kB\nPss: 999999 kB\n", ""},
	}
	for _, p := range procs {
		files := map[string]string{
			fmt.Sprintf("%d/stat", p.pid): fmt.Sprintf("%d (%s) S %d %d %d 0 -1\n", p.pid, p.comm, p.ppid, p.pgid, p.pgid),
		}
		if p.smaps != "" {
			files[fmt.Sprintf("%d/smaps_rollup", p.pid)] = "55d0-7ffd ---p 00000000 00:00 0  [rollup]\n" + p.smaps
		}
		if p.status != "" {
			files[fmt.Sprintf("%d/status", p.pid)] = p.status
		}
		write(t, root, files)
	}
	write(t, root, map[string]string{"self/stat": "garbage", "meminfo": meminfoFile})

	got := Trees(root, []int{100, 200, 400})
	want := map[int]Footprint{
		100: {PSS: (3000 + 390000 + 50000) << 10, RSS: (4000 + 400000 + 100000) << 10, Procs: 3},
		200: {PSS: 512 << 10, RSS: (2048 + 1024) << 10, Procs: 2},
		400: {},
	}
	for r, w := range want {
		if got[r] != w {
			t.Errorf("root %d: %+v, want %+v", r, got[r], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Trees = %v, want roots %v only", got, want)
	}
}

// TestTreesReal measures a real process group that holds 64 MiB it has written.
func TestTreesReal(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := filepath.Join("..", "cmd", "runall", "testdata", "hostalloc.py")
	c := exec.Command(py, script, "--mib", "64", "--over", "0", "--hold", "30")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	buf := make([]byte, 256)
	if _, err := out.Read(buf); err != nil { // its first line: all of it is allocated
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := Trees("", []int{c.Process.Pid})[c.Process.Pid]
		if f.Bytes() >= 64<<20 && f.RSS >= 64<<20 && f.Procs == 1 {
			t.Logf("%+v", f)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree holds %+v, want at least 64 MiB in one process", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
