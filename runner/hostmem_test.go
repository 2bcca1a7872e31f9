package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/runall/runall/hostmem"
)

// fixedMemory is a container whose memory does not move: what admission by host memory
// sees, without a cgroup.
type fixedMemory struct {
	m   hostmem.Memory
	err error
}

func (f fixedMemory) Read() (hostmem.Memory, error) { return f.m, f.err }

// TestHostAdmission: trials whose host needs do not fit together start one after another,
// each waiting line saying it waits for host memory; one whose need is beyond the limit
// fails at once; a trial without memory: is not held back.
func TestHostAdmission(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 4, stop-on-failure: false}
tasks:
  - name: sweep
    parallel-tasks:
      - name: a
        memory: 400MiB
        cmd: sleep 0.3
      - name: b
        memory: 400MiB
        cmd: sleep 0.3
      - name: huge
        memory: 4GiB
        cmd: 'true'
      - name: free
        cmd: sleep 0.3
`, Options{Resources: ResourceOptions{HostMemory: fixedMemory{m: hostmem.Memory{Limit: 1 << 30, Limited: true, Used: 300 << 20}}}})
	if err == nil {
		t.Fatalf("the run should fail: huge cannot fit\n%s", out)
	}
	got := byName(res)
	if got["a"].Status != "ok" || got["b"].Status != "ok" || got["free"].Status != "ok" {
		t.Fatalf("statuses %+v\n%s", got, out)
	}
	if h := got["huge"]; h.Status != "failed" || h.Attempts != 0 ||
		!strings.Contains(h.Reason, "needs more host memory than the container's limit: needs 4.0 GiB, the container's memory limit is 1.0 GiB (973 MiB after the 51 MiB margin)") {
		t.Errorf("huge: %s after %d attempts: %s", h.Status, h.Attempts, h.Reason)
	}
	// 1 GiB − 300 MiB used − 51 MiB margin: room for one of 400 MiB at a time.
	// (What a's shell holds already may take a MiB off its reservation.)
	if !strings.Contains(out, "needs 400 MiB of host memory; the container has 2") || !strings.Contains(out, "MiB free of 1.0 GiB (in use 300 MiB, ") || !strings.Contains(out, "MiB reserved for trials still growing, 51 MiB margin)") {
		t.Errorf("no trial waited for host memory\n%s", out)
	}
	first, second := got["a"], got["b"]
	if second.StartedAt.Before(first.StartedAt) {
		first, second = second, first
	}
	if second.StartedAt.Before(first.FinishedAt) {
		t.Errorf("a and b ran together: %v-%v and %v-%v", first.StartedAt, first.FinishedAt, second.StartedAt, second.FinishedAt)
	}
	if got["a"].HostMemory != 400<<20 {
		t.Errorf("a's recorded host need %d", got["a"].HostMemory)
	}
}

// TestHostMemoryUnreadable: a container whose memory cannot be read is a warning, and the
// trials run, admitted without regard to host memory.
func TestHostMemoryUnreadable(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: sweep
    memory: 400MiB
    parallel-tasks:
      - {name: a, cmd: 'true'}
      - {name: b, cmd: 'true'}
`, Options{Resources: ResourceOptions{HostMemory: fixedMemory{err: errors.New("memory.max: permission denied")}}})
	if err != nil || byName(res)["a"].Status != "ok" || byName(res)["b"].Status != "ok" {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "warning: cannot read") && !strings.Contains(out, "permission denied: trials are admitted without regard to host memory") {
		t.Errorf("no warning\n%s", out)
	}
}

// TestHostAndGPUAdmission: a trial starts only where both its needs fit. Here host memory
// has room for all four, the GPU for two at a time: the rest wait for the GPU, say so, and
// the host room they were given back is not counted twice.
func TestHostAndGPUAdmission(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    gpu-memory: 14GiB
    memory: 100MiB
    parallel-tasks:
      - name: t<replace>
        cmd: `+fakeAlloc("14GiB", "300ms")+`
        for-each: [1, 2, 3, 4]
`, Options{Resources: ResourceOptions{Probe: fakeGPUs(t, 32<<30), HostMemory: fixedMemory{m: hostmem.Memory{Limit: 1 << 30, Limited: true, Used: 100 << 20}}}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := mostAtOnce(res.Tasks); n != 2 {
		t.Errorf("%d ran at once, want 2 (the GPU's room)", n)
	}
	if !strings.Contains(out, "waiting: needs 14.0 GiB; GPU0") || strings.Contains(out, "of host memory;") {
		t.Errorf("the trials should wait for the GPU, not for host memory\n%s", out)
	}
	for _, r := range res.Tasks {
		if r.HostMemory != 100<<20 || r.GPUMemory != 14<<30 {
			t.Errorf("%s: host need %d, GPU need %d", r.Name, r.HostMemory, r.GPUMemory)
		}
	}
}
