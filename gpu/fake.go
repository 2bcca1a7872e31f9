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
	"time"
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
	Devices  []FakeDevice // see ParseFakeSpec
	StateDir string       // shared by every process that claims or measures them
	PIDs     FakePIDs     // how they report the processes on them
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
	stateLockName = "lock"
	stateIDName   = "id"
)

// FakeDevice is one simulated GPU: its memory, the share of it the driver keeps (used, but
// held by no process), and what another user's process holds on it from the start.
type FakeDevice struct {
	Total   uint64 // bytes
	Reserve uint64 // counted as used, by no process: the driver's own share
	Foreign uint64 // held by a process that is none of runall's (another container's)
}

// ParseFakeSpec reads a list of simulated GPUs such as "32GiB,32GiB" or "4x16GiB,8GiB",
// each optionally followed by ":reserve=SIZE" (memory no process holds) and
// ":foreign=SIZE" (held by another user's process): "2x80GiB:reserve=512MiB".
func ParseFakeSpec(spec string) ([]FakeDevice, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("empty simulated GPU spec: want sizes such as 32GiB,16GiB or 4x16GiB")
	}
	var devs []FakeDevice
	for i, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d is empty: want sizes such as 32GiB,16GiB", spec, i+1)
		}
		f, opts, _ := strings.Cut(f, ":")
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
		d := FakeDevice{Total: size}
		if err := d.parseOptions(opts); err != nil {
			return nil, fmt.Errorf("simulated GPU spec %q: entry %d: %w", spec, i+1, err)
		}
		for range count {
			devs = append(devs, d)
		}
	}
	return devs, nil
}

// parseOptions reads "reserve=SIZE:foreign=SIZE" (either, both, or neither).
func (d *FakeDevice) parseOptions(opts string) error {
	if opts == "" {
		return nil
	}
	for _, o := range strings.Split(opts, ":") {
		k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
		if !ok || (k != "reserve" && k != "foreign") {
			return fmt.Errorf("%q: want reserve=SIZE or foreign=SIZE after the size, such as 80GiB:reserve=512MiB:foreign=4GiB", o)
		}
		n, err := ParseSize(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if k == "reserve" {
			d.Reserve = n
		} else {
			d.Foreign = n
		}
	}
	if d.Reserve+d.Foreign > d.Total {
		return fmt.Errorf("reserve and foreign memory (%s) exceed the device's %s", FormatSize(d.Reserve+d.Foreign), FormatSize(d.Total))
	}
	return nil
}

// FormatFakeSpec writes devices back as a spec ParseFakeSpec reads exactly.
func FormatFakeSpec(devs []FakeDevice) string {
	parts := make([]string, len(devs))
	for i, d := range devs {
		parts[i] = exactSize(d.Total)
		if d.Reserve > 0 {
			parts[i] += ":reserve=" + exactSize(d.Reserve)
		}
		if d.Foreign > 0 {
			parts[i] += ":foreign=" + exactSize(d.Foreign)
		}
	}
	return strings.Join(parts, ",")
}

// exactSize writes a size that ParseSize reads back to the byte.
func exactSize(s uint64) string {
	switch {
	case s%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", s>>30)
	case s%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", s>>20)
	}
	return strconv.FormatUint(s, 10)
}

// DefaultFakeStateDir is where simulated GPUs keep their claims when RUNALL_FAKE_GPU_STATE
// is unset: one directory per user under tmpDir, so concurrent runs see each other's claims
// as they would on one machine's real GPUs.
func DefaultFakeStateDir(tmpDir string) string {
	return filepath.Join(tmpDir, fmt.Sprintf("runall-fake-gpus-%d", os.Getuid()))
}

// fakeState is a state directory opened for a given list of devices.
type fakeState struct {
	dir  string
	id   string
	devs []FakeDevice
	now  func() time.Time // when a claim is found dead, for its lingering memory
}

func openFakeState(dir string, devs []FakeDevice) (*fakeState, error) {
	if len(devs) == 0 {
		return nil, errors.New("no simulated GPUs: want sizes such as 32GiB,16GiB")
	}
	for _, d := range devs {
		if d.Total == 0 {
			return nil, errors.New("simulated GPU with no memory")
		}
		if d.Reserve+d.Foreign > d.Total {
			return nil, errors.New("simulated GPU whose reserve and foreign memory exceed its total")
		}
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
	s := &fakeState{dir: dir, devs: slices.Clone(devs), now: time.Now}
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

// claimFile is what a claim file holds: its size, how long its memory lingers once its
// owner has ended, and when that was (zero while the owner lives, or until a reader finds
// it dead: a process killed outright writes nothing).
type claimFile struct {
	size  uint64
	lag   time.Duration
	ended time.Time
}

// A claim file is three numbers at fixed width, rewritten in place, so that its length never
// changes: "%020d %020d %020d\n" (bytes, lag in ns, end in Unix ns or 0).
const claimWidth = 3 * 21

func (c claimFile) encode() []byte {
	var ended int64
	if !c.ended.IsZero() {
		ended = c.ended.UnixNano()
	}
	return fmt.Appendf(nil, "%020d %020d %020d\n", c.size, int64(c.lag), ended)
}

func decodeClaim(b []byte) (claimFile, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return claimFile{}, fmt.Errorf("bad claim %q", b)
	}
	size, err1 := strconv.ParseUint(f[0], 10, 64)
	lag, err2 := strconv.ParseInt(f[1], 10, 64)
	ended, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return claimFile{}, fmt.Errorf("bad claim %q: %w", b, err)
	}
	c := claimFile{size: size, lag: time.Duration(lag)}
	if ended != 0 {
		c.ended = time.Unix(0, ended)
	}
	return c, nil
}

// liveClaim is a claim on a device: its owner's, or, when lingering, memory its ended owner
// has not yet given back.
type liveClaim struct {
	name      string
	pid       uint32
	size      uint64
	lingering bool
}

// claims lists the claims on device i that count: live ones and lingering ones. It stamps
// the end of claims found dead, and deletes those whose memory has been given back. Hold
// the lock.
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
		c, counts, err := s.readClaim(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if counts {
			out = append(out, c.withName(e.Name(), uint32(pid)))
		}
	}
	return out, nil
}

// readClaim reads one claim file. One whose owner is gone lingers for its lag after its
// end, as a real process's memory stays visible to the driver for a while after it exited,
// and is then deleted.
func (s *fakeState) readClaim(path string) (c liveClaim, counts bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	defer f.Close()
	var buf [claimWidth]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil {
		return c, false, fmt.Errorf("claim %s: %w", path, err)
	}
	cf, err := decodeClaim(buf[:])
	if err != nil {
		return c, false, fmt.Errorf("claim %s: %w", path, err)
	}
	switch err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK): // its owner lives
		return liveClaim{size: cf.size}, true, nil
	case err != nil:
		return c, false, fmt.Errorf("claim %s: %w", path, err)
	}
	// Nobody holds it: its owner ended. One killed outright did not say when; it ended no
	// later than now, when it is first seen dead.
	now := s.now()
	if cf.ended.IsZero() && cf.lag > 0 {
		cf.ended = now
		if _, err := f.WriteAt(cf.encode(), 0); err != nil {
			return c, false, fmt.Errorf("claim %s: %w", path, err)
		}
	}
	if cf.lag > 0 && now.Sub(cf.ended) < cf.lag {
		return liveClaim{size: cf.size, lingering: true}, true, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return c, false, fmt.Errorf("remove dead claim: %w", err)
	}
	return c, false, nil
}

func (c liveClaim) withName(name string, pid uint32) liveClaim {
	c.name, c.pid = name, pid
	return c
}

// used sums what device i has in use: the driver's reserve, the foreign process, and every
// claim that counts except the one named skip. Hold the lock.
func (s *fakeState) used(i int, skip string) (uint64, error) {
	cs, err := s.claims(i)
	if err != nil {
		return 0, err
	}
	sum := s.devs[i].Reserve + s.devs[i].Foreign
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
	st, err := openFakeState(opts.StateDir, opts.Devices)
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
	out := make([]Device, len(p.st.devs))
	err := p.st.locked(func() error {
		for i, d := range p.st.devs {
			used, err := p.st.used(i, "")
			if err != nil {
				return err
			}
			free := uint64(0)
			if used < d.Total { // a state dir reused with smaller sizes can hold more
				free = d.Total - used
			}
			out[i] = Device{Index: i, UUID: p.st.uuid(i), Name: fakeName, Total: d.Total, Used: used, Free: free}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	return out, nil
}

// foreignPID is the pid the foreign process on device i reports: beyond every claimant's,
// host PIDs included, so that it is never taken for one of them.
func foreignPID(i int) uint32 { return 2*hostPIDOffset + uint32(i) }

// Processes implements Probe: one "fake-alloc" process per live claim, and the foreign
// process where the device has one. Lingering memory belongs to processes that have ended:
// the driver counts it, but lists no process for it.
func (p *fakeProbe) Processes(index int) ([]Process, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	if index < 0 || index >= len(p.st.devs) {
		return nil, fmt.Errorf("simulated GPUs: no gpu %d (%d simulated)", index, len(p.st.devs))
	}
	var cs []liveClaim
	err := p.st.locked(func() (err error) {
		cs, err = p.st.claims(index)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPUs: %w", err)
	}
	out := make([]Process, 0, len(cs)+1)
	if p.pids == FakePIDsNone {
		return out, nil
	}
	if f := p.st.devs[index].Foreign; f > 0 {
		out = append(out, Process{PID: foreignPID(index), UsedMemory: f})
	}
	for _, c := range cs {
		switch {
		case c.lingering:
			continue
		case p.pids == FakePIDsHost:
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
		if i >= 0 && i < len(p.st.devs) {
			uuids = append(uuids, p.st.uuid(i))
		}
	}
	return []string{
		EnvCUDAVisibleDevices + "=" + strings.Join(uuids, ","),
		EnvCUDADeviceOrder + "=PCI_BUS_ID", // as on real GPUs, so trials see the same either way
		EnvFakeGPUs + "=" + FormatFakeSpec(p.st.devs),
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
