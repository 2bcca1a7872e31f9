package gpusim

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runall/runall/internal/owned"
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

// Options selects simulated GPUs.
type Options struct {
	Devices  []Device // see ParseSpec
	StateDir string   // shared by every process that claims or measures them
	PIDs     PIDs     // how they report the processes on them
}

// as they would on one machine's real GPUs.
func DefaultStateDir(tmpDir string) string {
	return filepath.Join(tmpDir, fmt.Sprintf("runall-fake-gpus-%d", os.Getuid()))
}

// state is a state directory opened for a given list of devices.
type state struct {
	dir  string
	id   string
	devs []Device
	now  func() time.Time // when a claim is found dead, for its lingering memory
}

func openState(dir string, devs []Device) (*state, error) {
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
	s := &state{dir: dir, devs: slices.Clone(devs), now: time.Now}
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
		// Written through a file renamed into place: a crash never leaves a half-written id.
		return s.inDir(func(d *owned.Dir) error { return d.WriteFile(stateIDName, []byte(s.id+"\n"), 0o644) })
	})
	if err != nil {
		return nil, fmt.Errorf("simulated GPU state %s: %w", dir, err)
	}
	return s, nil
}

// overlap turns on the MPS model on every device, for a process that is an MPS client: the
// kernels of its server's clients run at once.
func (s *state) overlap() {
	for i := range s.devs {
		s.devs[i].MPS = true
	}
}

func (s *state) uuid(i int) string { return fmt.Sprintf("GPU-fake-%d-%s", i, s.id) }

// inDir runs fn on the state directory, reached through its root: what it removes or
// replaces stays inside.
func (s *state) inDir(fn func(d *owned.Dir) error) error {
	d, err := owned.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(d)
}

// remove removes the claim file at path, which is under the state directory.
func (s *state) remove(path string) error {
	rel, err := filepath.Rel(s.dir, path)
	if err != nil {
		return err
	}
	return s.inDir(func(d *owned.Dir) error { return d.Remove(rel) })
}

// locked runs fn holding the state's exclusive lock. Each call opens the lock file afresh:
// flock belongs to the open file, so goroutines of one process exclude each other too.
func (s *state) locked(fn func() error) error {
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
	load  Load // what it computes now: zero while it only holds memory
}

// A claim file is five numbers at fixed width, rewritten in place, so that its length never
// changes: "%020d %020d %020d %07d %07d\n" (bytes, lag in ns, end in Unix ns or 0, and its
// load's busy and SM shares in millionths). Claims written before the load was kept end
// after the first three (claimWidthV1) and compute nothing.
const (
	claimWidth   = 3*21 + 2*8
	claimWidthV1 = 3 * 21
	millionths   = 1e6
)

func (c claimFile) encode() []byte {
	var ended int64
	if !c.ended.IsZero() {
		ended = c.ended.UnixNano()
	}
	busy, sm := int64(c.load.Busy*millionths+0.5), int64(c.load.SM*millionths+0.5)
	return fmt.Appendf(nil, "%020d %020d %020d %07d %07d\n", c.size, int64(c.lag), ended, busy, sm)
}

func decodeClaim(b []byte) (claimFile, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 && len(f) != 5 {
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
	if len(f) == 5 {
		busy, err1 := strconv.ParseUint(f[3], 10, 32)
		sm, err2 := strconv.ParseUint(f[4], 10, 32)
		if err := errors.Join(err1, err2); err != nil || busy > millionths || sm > millionths {
			return claimFile{}, fmt.Errorf("bad claim %q: want load shares from 0 to 1000000", b)
		}
		c.load = Load{Busy: float64(busy) / millionths, SM: float64(sm) / millionths}
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
	load      Load // what its owner computes now; a lingering claim's owner computes nothing
}

// claims lists the claims on device i that count: live ones and lingering ones. It stamps
// the end of claims found dead, and deletes those whose memory has been given back. Hold
// the lock.
func (s *state) claims(i int) ([]liveClaim, error) {
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
func (s *state) readClaim(path string) (c liveClaim, counts bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	defer f.Close()
	var buf [claimWidth]byte
	n, err := f.ReadAt(buf[:], 0)
	// A short file is a claim its owner was killed while making (it is made under the
	// state lock, which a reader holds): it held nothing, as a process killed before its
	// context was made holds nothing on a real GPU.
	unwritten := errors.Is(err, io.EOF) && n < claimWidthV1
	if err != nil && !errors.Is(err, io.EOF) {
		return c, false, fmt.Errorf("claim %s: %w", path, err)
	}
	var cf claimFile
	if !unwritten {
		if cf, err = decodeClaim(buf[:n]); err != nil {
			return c, false, fmt.Errorf("claim %s: %w", path, err)
		}
	}
	switch err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK): // its owner lives
		return liveClaim{size: cf.size, load: cf.load}, true, nil
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
	if err := s.remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
func (s *state) used(i int, skip string) (uint64, error) {
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
