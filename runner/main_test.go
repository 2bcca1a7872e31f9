package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/size"
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
	sizeFlag := fs.String("size", "1GiB", "")
	ramp := fs.Duration("ramp", 0, "")
	hold := fs.Duration("hold", 0, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	n, err := size.Parse(*sizeFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sizes, err := gpusim.ParseSpec(os.Getenv(gpusim.EnvGPUs))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	err = gpusim.Alloc(context.Background(), gpusim.AllocOptions{
		Size: n, Ramp: *ramp, Hold: *hold, Step: 50 * time.Millisecond,
		Devices: os.Getenv(gpu.EnvCUDAVisibleDevices), GPUs: sizes, StateDir: os.Getenv(gpusim.EnvState), Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
