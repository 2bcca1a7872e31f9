package main_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/internal/citest"
)

// memCgroup is a memory cgroup a test made, with a limit, for runall to run in: the
// container of a Pod with a memory limit, on a real kernel whose OOM killer strikes there.
type memCgroup struct {
	dir string
	v2  bool
}

// newMemCgroup makes a memory cgroup limited to limit bytes beneath this process's own (a
// child of a cgroup v1 memory hierarchy, or of the unified one where it has the memory
// controller), without swap, removed when the test ends. Without root or a writable memory
// controller the test skips, and fails in CI.
func newMemCgroup(t *testing.T, limit uint64) *memCgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		citest.Unavailable(t, "making a memory cgroup needs root")
	}
	own := hostmem.Open("")
	if own.Kind() == hostmem.Meminfo {
		citest.Unavailable(t, "no memory cgroup controller is mounted (cgroup v1 memory, or v2 with memory)")
	}
	name := fmt.Sprintf("runall-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	cg := &memCgroup{dir: filepath.Join(own.Dir(), name), v2: own.Kind() == hostmem.CgroupV2}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		citest.Unavailable(t, "cannot make a memory cgroup under %s: %v", own.Dir(), err)
	}
	t.Cleanup(func() { cg.remove(t) })
	var err error
	if cg.v2 {
		if _, statErr := os.Stat(filepath.Join(cg.dir, "memory.max")); statErr != nil {
			// The parent must hand its children the memory controller; a parent that
			// holds processes itself (this test's) cannot, and then there is no way here.
			_ = os.WriteFile(filepath.Join(own.Dir(), "cgroup.subtree_control"), []byte("+memory"), 0)
		}
		err = cg.write("memory.max", strconv.FormatUint(limit, 10))
		if err == nil {
			err = cg.writeIfThere("memory.swap.max", "0")
		}
	} else {
		err = cg.write("memory.limit_in_bytes", strconv.FormatUint(limit, 10))
		if err == nil {
			err = cg.writeIfThere("memory.memsw.limit_in_bytes", strconv.FormatUint(limit, 10)) // no swap beyond it
		}
		if err == nil {
			err = cg.writeIfThere("memory.swappiness", "0")
		}
	}
	if err != nil {
		citest.Unavailable(t, "cannot limit the memory cgroup %s: %v", cg.dir, err)
	}
	return cg
}

func (cg *memCgroup) write(name, value string) error {
	return os.WriteFile(filepath.Join(cg.dir, name), []byte(value), 0)
}

func (cg *memCgroup) writeIfThere(name, value string) error {
	if err := cg.write(name, value); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// oomKills is the cgroup's count of processes the OOM killer took.
func (cg *memCgroup) oomKills(t *testing.T) uint64 {
	t.Helper()
	p := hostmem.NewCgroupV1(cg.dir, "/proc/meminfo")
	if cg.v2 {
		p = hostmem.NewCgroupV2(cg.dir, cg.dir, "/proc/meminfo")
	}
	m, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasOOMKills {
		t.Fatalf("%s: the kernel keeps no oom_kill counter", cg.dir)
	}
	return m.OOMKills
}

// remove kills what is left in the cgroup and removes it.
func (cg *memCgroup) remove(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := os.Remove(cg.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cannot remove the test's cgroup %s: %v", cg.dir, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runIn runs runall with args inside the cgroup: a shell moves itself in, then becomes
// runall, so that runall and every trial it starts are charged to it. It fails the test if
// runall itself is killed.
func (e *e2e) runIn(cg *memCgroup, args ...string) result {
	e.t.Helper()
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	p := e.startCmd("/bin/sh", args, append([]string{"-c", script, cg.dir, runallBin}, args...)...)
	err := p.cmd.Wait()
	defer p.cancel()
	r := result{args: args, stdout: p.stdout.String(), stderr: p.stderr.String()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.t.Fatalf("runall itself was killed by %v (%v; the OOM killer, or the test's %v limit)\n%v", ws.Signal(), err, cmdTimeout, r)
	}
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		e.t.Errorf("the race detector found a data race in runall\n%v", r)
	}
	r.code = p.cmd.ProcessState.ExitCode()
	return r
}
