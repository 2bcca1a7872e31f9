package gpusim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/runall/runall/gpu"
)

// ErrGPUFault is wrapped by Alloc's error when a fault on one of its GPUs ended it.
var ErrGPUFault = errors.New("simulated GPU fault")

// faultPoll is how often a fake-alloc process looks for a fault that ends it: a reading of
// one small file.
const faultPoll = 100 * time.Millisecond

// watchFaults ends a fake-alloc process's ctx as the fault would end a CUDA process: one
// that kills everything on its GPU (Xid 79) at once, also a process that starts on it after
// (its ctx ends before its first step); a memory error (Xid 48, 94, 95, an ECC error) the
// processes that were on it when it happened. end turns the context's end into the fault's
// error and says, on stderr, what the driver logged and what CUDA answered.
func watchFaults(ctx context.Context, c *claim, stderr io.Writer) (context.Context, func(error) error) {
	s, devs := c.st, c.devs
	start := s.now()
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var hit armed
	if f, ok, err := killing(s, devs, start, start); err == nil && ok && f.fault().Kills() == gpu.KillsAll {
		hit = f
		cancel(ErrGPUFault)
	}
	go func() {
		t := time.NewTicker(faultPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
			}
			if f, ok, err := killing(s, devs, start, s.now()); err == nil && ok {
				hit = f
				cancel(ErrGPUFault)
				return
			}
		}
	}()
	end := func(err error) error {
		close(done)
		cause := context.Cause(ctx) // read before cancel: hit is set before the cause
		cancel(nil)
		if errors.Is(cause, ErrGPUFault) {
			return faultError(s, hit, stderr)
		}
		return err
	}
	return ctx, end
}

// killing is the first fault due by now on one of devs that ends a process started at
// start.
func killing(s *state, devs []int, start, now time.Time) (armed, bool, error) {
	fs, err := readFaults(s.dir)
	if err != nil {
		return armed{}, false, err
	}
	for _, f := range fs {
		if !slices.Contains(devs, f.device) || now.Before(f.due) {
			continue
		}
		switch f.fault().Kills() {
		case gpu.KillsAll:
			return f, true, nil
		case gpu.KillsRunning:
			if !f.due.Before(start) {
				return f, true, nil
			}
		}
	}
	return armed{}, false, nil
}

// faultError writes what a process sees of the fault and returns Alloc's error for it.
func faultError(s *state, f armed, stderr io.Writer) error {
	fmt.Fprintf(stderr, "kernel: %s\n", kernelLog(f, s.uuid(f.device)))
	if f.fault().MemoryError() {
		// cudaErrorECCUncorrectable's text, as PyTorch raises it.
		fmt.Fprintln(stderr, "RuntimeError: CUDA error: uncorrectable ECC error encountered")
	}
	return fmt.Errorf("fake-alloc: %w on gpu %d (%s): %s", ErrGPUFault, f.device, s.uuid(f.device), f.fault())
}

// kernelLog is the line the driver prints in the kernel log for the fault: the text after
// the Xid number as NVIDIA's documentation quotes it where it does (docs/gpu.md names each
// source), the table's description otherwise. The PCI address is the simulation's.
func kernelLog(f armed, uuid string) string {
	if f.kind != gpu.FaultXid {
		return fmt.Sprintf("NVRM: GPU %s: %s", uuid, f.fault())
	}
	var text string
	switch f.xid {
	case 48:
		text = fmt.Sprintf("An uncorrectable double bit error (DBE) has been detected on GPU (%s)", uuid)
	case 63:
		text = "Dynamic Page Retirement: New retired page, reload the driver to activate. (0x000000000badf000)"
	case 64:
		text = "Dynamic Page Retirement: Fatal error, unable to retire page (0x000000000badf000)"
	case 79:
		text = "GPU has fallen off the bus."
	case 94:
		text = "Contained: CE User Channel (0x9). RST: No, D-RST: No"
	default:
		text = f.fault().String()
	}
	return fmt.Sprintf("NVRM: Xid (PCI:0000:%02x:00): %d, %s", f.device+1, f.xid, text)
}
