package gpusim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/owned"
)

// Injection is a fault a simulated GPU takes at a time from the run's start, written in
// its spec beside :mps: "32GiB:xid=79@30s", ":pending-retirement@1m", ":ecc@10s".
type Injection struct {
	Device int
	Kind   gpu.FaultKind // gpu.FaultXid, gpu.FaultPendingRetirement or gpu.FaultECC
	Xid    uint64        // for gpu.FaultXid
	After  time.Duration // from the run's start
}

const injectionHint = "want xid=N@T, pending-retirement@T or ecc@T, with T the time from the run's start, such as xid=79@30s"

// parseInjection reads one option of a GPU's spec; ok is false when it is not a fault.
func parseInjection(o string) (inj Injection, ok bool, err error) {
	o = strings.TrimSpace(o)
	name, at, hasAt := strings.Cut(o, "@")
	kind, arg, _ := strings.Cut(name, "=")
	switch kind {
	case "xid":
		inj.Kind = gpu.FaultXid
		n, err := strconv.ParseUint(arg, 10, 16)
		if err != nil || n == 0 {
			return inj, true, fmt.Errorf("%q: the Xid is a number such as 79; %s", o, injectionHint)
		}
		inj.Xid = n
	case string(gpu.FaultPendingRetirement), string(gpu.FaultECC):
		if arg != "" {
			return inj, true, fmt.Errorf("%q: %s takes no value; %s", o, kind, injectionHint)
		}
		inj.Kind = gpu.FaultKind(kind)
	default:
		return inj, false, nil
	}
	if !hasAt {
		return inj, true, fmt.Errorf("%q: no time; %s", o, injectionHint)
	}
	if inj.After, err = time.ParseDuration(at); err != nil || inj.After < 0 {
		return inj, true, fmt.Errorf("%q: %q is not a time such as 30s or 2m; %s", o, at, injectionHint)
	}
	return inj, true, nil
}

// ParseFaults reads the faults a spec injects, each with the index of its GPU. It refuses
// what ParseSpec refuses.
func ParseFaults(spec string) ([]Injection, error) {
	if _, err := ParseSpec(spec); err != nil {
		return nil, err
	}
	var out []Injection
	index := 0
	for _, f := range strings.Split(spec, ",") {
		f, opts, _ := strings.Cut(strings.TrimSpace(f), ":")
		count := 1
		if n, _, ok := strings.Cut(f, "x"); ok {
			count, _ = strconv.Atoi(strings.TrimSpace(n)) // checked by ParseSpec
		}
		for _, o := range strings.Split(opts, ":") {
			inj, ok, _ := parseInjection(o)
			if !ok {
				continue
			}
			for d := range count {
				inj.Device = index + d
				out = append(out, inj)
			}
		}
		index += count
	}
	return out, nil
}

// The state directory holds the faults a run armed, one a line: "<device> <kind> <xid>
// <due in Unix ns>". Written whole through a file renamed into place; read without the
// lock.
const stateFaultsName = "faults"

// armed is a fault with the time it falls due.
type armed struct {
	device int
	kind   gpu.FaultKind
	xid    uint64
	due    time.Time
}

// ArmFaults records in the state directory the faults a run injects, due from start, in
// place of those an earlier run armed: a run's spec says what is faulty. `runall gpus`,
// fake-alloc and every probe over the directory then see them.
func ArmFaults(opts Options, faults []Injection, start time.Time) error {
	st, err := openState(opts.StateDir, opts.Devices)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, f := range faults {
		if f.Device < 0 || f.Device >= len(st.devs) {
			return fmt.Errorf("simulated GPU fault on gpu %d: there are %d", f.Device, len(st.devs))
		}
		fmt.Fprintf(&b, "%d %s %d %d\n", f.Device, f.Kind, f.Xid, start.Add(f.After).UnixNano())
	}
	return st.inDir(func(d *owned.Dir) error {
		if b.Len() == 0 {
			if err := d.Remove(stateFaultsName); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}
		return d.WriteFile(stateFaultsName, []byte(b.String()), 0o644)
	})
}

// readFaults reads the faults armed in the state directory dir, due or not.
func readFaults(dir string) ([]armed, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFaultsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("simulated GPU faults: %w", err)
	}
	var out []armed
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("simulated GPU faults %s: bad line %q", dir, line)
		}
		dev, err1 := strconv.Atoi(f[0])
		xid, err2 := strconv.ParseUint(f[2], 10, 64)
		due, err3 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("simulated GPU faults %s: bad line %q: %w", dir, line, err)
		}
		out = append(out, armed{device: dev, kind: gpu.FaultKind(f[1]), xid: xid, due: time.Unix(0, due)})
	}
	return out, nil
}

// fault is the armed fault as gpu judges it.
func (a armed) fault() gpu.Fault {
	f := gpu.Fault{Kind: a.kind, Xid: a.xid, At: a.due}
	if a.kind == gpu.FaultECC {
		f.Count = 1
	}
	return f
}

// healthAt is device i's health at now: the faults armed in dir due by then.
func healthAt(dir string, i int, now time.Time) (gpu.Health, error) {
	fs, err := readFaults(dir)
	h := gpu.Health{XidsWatched: true}
	for _, f := range fs {
		if f.device != i || now.Before(f.due) {
			continue
		}
		switch f.kind {
		case gpu.FaultXid:
			h.Xids = append(h.Xids, gpu.XidEvent{Xid: f.xid, At: f.due})
		case gpu.FaultPendingRetirement:
			h.PendingRetirement = true
		case gpu.FaultECC:
			h.UncorrectedECC++
		}
	}
	return h, err
}

// Health implements gpu.Probe: the faults armed on the device that are due.
func (p *probe) Health(index int) (gpu.Health, error) {
	if p.isClosed() {
		return gpu.Health{}, errClosed
	}
	if index < 0 || index >= len(p.st.devs) {
		return gpu.Health{}, fmt.Errorf("simulated GPUs: no gpu %d (%d simulated)", index, len(p.st.devs))
	}
	return healthAt(p.st.dir, index, p.st.now())
}
