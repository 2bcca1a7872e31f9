package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
)

// TestMain lets the test binary stand in for `runall fake-alloc` in trials' commands:
// "$RUNALL_TEST_BIN" -size 10GiB -hold 300ms, with RUNALL_TEST_FAKE_ALLOC set. The
// scheduler's tests then run real processes that claim simulated GPU memory.
func TestMain(m *testing.M) {
	if os.Getenv("RUNALL_TEST_FAKE_ALLOC") != "" {
		os.Exit(fakeAllocMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeAllocMain(args []string) int {
	fs := flag.NewFlagSet("fake-alloc", flag.ContinueOnError)
	size := fs.String("size", "1GiB", "")
	ramp := fs.Duration("ramp", 0, "")
	hold := fs.Duration("hold", 0, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	n, err := gpu.ParseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sizes, err := gpu.ParseFakeSpec(os.Getenv(gpu.EnvFakeGPUs))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	err = gpu.FakeAlloc(context.Background(), gpu.FakeAllocOptions{
		Size: n, Ramp: *ramp, Hold: *hold, Step: 50 * time.Millisecond,
		Devices: os.Getenv(gpu.EnvCUDAVisibleDevices), GPUs: sizes, StateDir: os.Getenv(gpu.EnvFakeGPUState), Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
