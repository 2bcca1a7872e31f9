package gpu

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Simulated GPUs keep their state in a directory that every process of a run shares (runall,
// its trials' fake-alloc, a fake-alloc started by hand with the same environment):
//
//	<state>/lock              flocked around every read-check-write of the claims
//	<state>/id                a random id, so UUIDs are stable within the state dir
//	<state>/<uuid>/<pid>-<r>  one claim: its current size, written in place at fixed width
//
// A claimant holds an exclusive flock on its claim file for as long as it lives; the kernel
// drops it when the process dies, however it dies. A reader that manages to take that flock
// has found a dead claim, and deletes it.

// FakeOptions selects simulated GPUs.
type FakeOptions struct {
	Sizes    []uint64 // total memory of each device, in bytes (see ParseFakeSpec)
	StateDir string   // shared by every process that claims or measures them
	PIDs     FakePIDs // how they report the processes on them
}

// FakePIDs is how simulated GPUs report the processes that claim their memory: as NVML does
// where it shares runall's pid namespace (recent drivers, VMs, bare metal, hostPID Pods), or
// as an older driver inside a container does.
type FakePIDs int

const (
	FakePIDsLocal FakePIDs = iota // each claimant's own PID
	FakePIDsHost                  // numbers that name no process here, as the host's PIDs seen from a container
	FakePIDsNone                  // no processes at all: memory figures only
)

// hostPIDOffset turns a PID into one no pid namespace here can have: PID_MAX_LIMIT on
// 64-bit Linux. The same claimant always gets the same number, as a host PID would be.
const hostPIDOffset = 1 << 22

// ParseFakePIDs reads RUNALL_FAKE_HOST_PIDS: empty or "0" for local PIDs, "1" for host PIDs,
// "none" for no processes.
func ParseFakePIDs(s string) (FakePIDs, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false":
		return FakePIDsLocal, nil
	case "1", "true":
		return FakePIDsHost, nil
	case "none":
		return FakePIDsNone, nil
	}
	return 0, fmt.Errorf("%s=%q: want 1 (report host PIDs, as a container on an older driver sees them), none (report no processes) or 0", EnvFakeHostPIDs, s)
}

// ErrOutOfMemory is wrapped by FakeAlloc's error when a claim does not fit on its device.
var ErrOutOfMemory = errors.New("simulated GPU out of memory")

var errClosed = errors.New("gpu: probe is closed")

const (
	fakeName      = "Simulated GPU"
	fakeProcName  = "fake-alloc"
	claimWidth    = 21 // "%020d\n": every size fits, so rewriting never changes the length
	stateLockName = "lock"
	stateIDName   = "id"
)

// ParseFakeSpec reads a list of device sizes such as "32GiB,32GiB" or "4x16GiB,8GiB".
func ParseFakeSpec(spec string) ([]uint64, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("empty simulated GPU spec: want sizes such as 32GiB,16GiB or 4x16GiB")
	}
	var sizes []uint64
	for i, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d is empty: want sizes such as 32GiB,16GiB", spec, i+1)
		}
		count := 1
		if n, rest, ok := strings.Cut(f, "x"); ok {
			c, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil || c < 1 || c > 1024 {
				return nil, fmt.Errorf("simulated GPU spec %q: %q: want COUNTxSIZE with COUNT from 1 to 1024, such as 4x16GiB", spec, f)
			}
			count, f = c, strings.TrimSpace(rest)
		}
		size, err := ParseSize(f)
		if err != nil {
			return nil, fmt.Errorf("simulated GPU spec %q: %w", spec, err)
		}
		if size == 0 {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d has no memory", spec, i+1)
		}
		for range count {
			sizes = append(sizes, size)
		}
	}
	return sizes, nil
}

// FormatFakeSpec writes sizes back as a spec ParseFakeSpec reads exactly.
func FormatFakeSpec(sizes []uint64) string {
	parts := make([]string, len(sizes))
	for i, s := range sizes {
		switch {
		case s%(1<<30) == 0:
			parts[i] = fmt.Sprintf("%dGiB", s>>30)
		case s%(1<<20) == 0:
			parts[i] = fmt.Sprintf("%dMiB", s>>20)
		default:
			parts[i] = strconv.FormatUint(s, 10)
		}
	}
	return strings.Join(parts, ",")
}

// DefaultFakeStateDir is where simulated GPUs keep their claims when RUNALL_FAKE_GPU_STATE
// is unset: one directory per user under tmpDir, so concurrent runs see each other's claims
// as they would on one machine's real GPUs.
func DefaultFakeStateDir(tmpDir string) string {
	return filepath.Join(tmpDir, fmt.Sprintf("runall-fake-gpus-%d", os.Getuid()))
}

// fakeState is a state directory opened for a given list of device sizes.
type fakeState struct {
	dir   string
	id    string
	sizes []uint64
}

func openFakeState(dir string, sizes []uint64) (*fakeState, error) {
	if len(sizes) == 0 {
		return nil, errors.New("no simulated GPUs: want sizes such as 32GiB,16GiB")
	}
	if slices.Contains(sizes, 0) {
		return nil, errors.New("simulated GPU with no memory")
	}
	if dir == "" {
		return nil, errors.New("no state directory for the simulated GPUs")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("simulated GPU state: %w", err)
	}
	s := &fakeState{dir: dir, sizes: slices.Clone(sizes)}
	err = s.locked(func() error {
		idPath := filepath.Join(dir, stateIDName)
		b, err := os.ReadFile(idPath)
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			s.id = strings.TrimSpace(string(b))
			return nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		s.id = randomHex(4)
		// Write and rename, so that a crash never leaves a half-written id behind.
		tmp := idPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(s.id+"\n"), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, idPath)
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPU state %s: %w", dir, err)
	}
	return s, nil
}

func (s *fakeState) uuid(i int) string { return fmt.Sprintf("GPU-fake-%d-%s", i, s.id) }

// locked runs fn holding the state's exclusive lock. Each call opens the lock file afresh:
// flock belongs to the open file, so goroutines of one process exclude each other too.
func (s *fakeState) locked(fn func() error) error {
	f, err := os.OpenFile(filepath.Join(s.dir, stateLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close() // closing drops the lock
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return fn()
}

type liveClaim struct {
	name string
	pid  uint32
	size uint64
}

// claims lists the live claims on device i, deleting dead ones. Hold the lock.
func (s *fakeState) claims(i int) ([]liveClaim, error) {
	dir := filepath.Join(s.dir, s.uuid(i))
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []liveClaim
	for _, e := range ents {
		pidStr, _, ok := strings.Cut(e.Name(), "-")
		pid, perr := strconv.ParseUint(pidStr, 10, 32)
		if !ok || perr != nil || !e.Type().IsRegular() {
			continue // not a claim
		}
		size, live, err := readClaim(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if live {
			out = append(out, liveClaim{name: e.Name(), pid: uint32(pid), size: size})
		}
	}
	return out, nil
}

// readClaim reads one claim file, deleting it if its owner is gone.
func readClaim(path string) (size uint64, live bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	switch err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil: // nobody holds it: its owner died
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, false, fmt.Errorf("remove dead claim: %w", err)
		}
		return 0, false, nil
	case !errors.Is(err, syscall.EWOULDBLOCK):
		return 0, false, fmt.Errorf("claim %s: %w", path, err)
	}
	var buf [claimWidth]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil {
		return 0, false, fmt.Errorf("claim %s: %w", path, err)
	}
	size, err = strconv.ParseUint(strings.TrimSpace(string(buf[:])), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("claim %s: bad size %q", path, buf[:])
	}
	return size, true, nil
}

// used sums the live claims on device i except the one named skip. Hold the lock.
func (s *fakeState) used(i int, skip string) (uint64, error) {
	cs, err := s.claims(i)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, c := range cs {
		if c.name != skip {
			sum += c.size
		}
	}
	return sum, nil
}

// fakeProbe is a Probe over simulated GPUs; every measurement reads the shared state.
type fakeProbe struct {
	st   *fakeState
	pids FakePIDs
	proc string // procfs root, to tell a claimant of this pid namespace

	mu     sync.Mutex
	closed bool
}

// OpenFake returns a Probe over simulated GPUs whose memory is claimed by `runall
// fake-alloc` processes sharing opts.StateDir (created if missing).
func OpenFake(opts FakeOptions) (Probe, error) {
	st, err := openFakeState(opts.StateDir, opts.Sizes)
	if err != nil {
		return nil, err
	}
	return &fakeProbe{st: st, pids: opts.PIDs, proc: "/proc"}, nil
}

func (p *fakeProbe) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Devices implements Probe.
func (p *fakeProbe) Devices() ([]Device, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	out := make([]Device, len(p.st.sizes))
	err := p.st.locked(func() error {
		for i, total := range p.st.sizes {
			used, err := p.st.used(i, "")
			if err != nil {
				return err
			}
			free := uint64(0)
			if used < total { // a state dir reused with smaller sizes can hold more
				free = total - used
			}
			out[i] = Device{Index: i, UUID: p.st.uuid(i), Name: fakeName, Total: total, Used: used, Free: free}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	return out, nil
}

// Processes implements Probe: one "fake-alloc" process per live claim.
func (p *fakeProbe) Processes(index int) ([]Process, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	if index < 0 || index >= len(p.st.sizes) {
		return nil, fmt.Errorf("simulated GPUs: no gpu %d (%d simulated)", index, len(p.st.sizes))
	}
	var cs []liveClaim
	err := p.st.locked(func() (err error) {
		cs, err = p.st.claims(index)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	out := make([]Process, 0, len(cs))
	for _, c := range cs {
		switch p.pids {
		case FakePIDsNone:
			continue
		case FakePIDsHost:
			out = append(out, Process{PID: c.pid + hostPIDOffset, UsedMemory: c.size})
		default:
			// A claimant holds its claim file open, as a CUDA process holds /dev/nvidia*.
			local := holdsOpen(p.proc, c.pid, filepath.Join(p.st.dir, p.st.uuid(index)))
			out = append(out, Process{PID: c.pid, Name: fakeProcName, UsedMemory: c.size, Local: local})
		}
	}
	slices.SortFunc(out, func(a, b Process) int { return cmp.Compare(a.PID, b.PID) })
	return out, nil
}

// Env implements Probe: the UUIDs, and where fake-alloc finds the devices and their claims.
func (p *fakeProbe) Env(indices []int) []string {
	uuids := make([]string, 0, len(indices))
	for _, i := range indices {
		if i >= 0 && i < len(p.st.sizes) {
			uuids = append(uuids, p.st.uuid(i))
		}
	}
	return []string{
		EnvCUDAVisibleDevices + "=" + strings.Join(uuids, ","),
		EnvCUDADeviceOrder + "=PCI_BUS_ID", // as on real GPUs, so trials see the same either way
		EnvFakeGPUs + "=" + FormatFakeSpec(p.st.sizes),
		EnvFakeGPUState + "=" + p.st.dir,
	}
}

// Close implements Probe. Claims belong to their processes, so there is nothing to release.
func (p *fakeProbe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

// flock retries on EINTR, which a blocking flock returns when a signal arrives.
func flock(f *os.File, how int) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), how); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
