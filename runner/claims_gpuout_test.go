package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/runner/results"
)

// TestClaimsGivenBackWhenEveryGPUIsOut (issue 45, point 1): under --claims, once every GPU
// is out of service the trials' claims go back to the sweep, not recorded as done, so that
// a runall on healthy GPUs (a new Pod) resumes them at once, well before the hour-long
// lease would let it.
func TestClaimsGivenBackWhenEveryGPUIsOut(t *testing.T) {
	store := claimstest.NewMem()
	devs := []gpusim.Device{{Total: 32 << 30}}
	state := t.TempDir()
	probe, err := gpusim.Open(gpusim.Options{Devices: devs, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	go func() { // the fault falls due once the trial holds its claim
		for claimKeyOf(store) == "" {
			time.Sleep(10 * time.Millisecond)
		}
		if err := gpusim.ArmFaults(gpusim.Options{Devices: devs, StateDir: state},
			[]gpusim.Injection{{Device: 0, Kind: gpu.FaultXid, Xid: 79}}, time.Now()); err != nil {
			t.Error(err)
		}
	}()
	quick := filepath.Join(t.TempDir(), "quick") // long in the first runall, quick in the next
	file := fmt.Sprintf("tasks:\n  - name: sweep\n    parallel-tasks:\n      - name: t00\n        gpu-memory: 1GiB\n"+
		"        cmd: if [ -e %q ]; then echo resumed; else sleep 30; fi\n", quick)
	res, output, err := runFile(t, file, Options{Grace: time.Second, Resources: ResourceOptions{Probe: probe},
		Claims: ClaimsOptions{Store: store, Lease: time.Hour}})
	if err == nil {
		t.Fatalf("run ended ok, want it failed: every GPU is out of service\n%s", output)
	}
	if slices.ContainsFunc(store.Keys(), func(k string) bool { return strings.HasPrefix(k, "done/") }) {
		t.Fatalf("the trial was recorded as done: %q\n%s", store.Keys(), output)
	}
	if k := claimKeyOf(store); k != "" {
		t.Errorf("claim %s still there, want it given back\n%s", k, output)
	}
	if !strings.Contains(output, "t00: every GPU is out of service; its claim is given back for another runall") {
		t.Errorf("want the claim's going back said\n%s", output)
	}
	if res != nil && len(res.Tasks) == 1 && res.Tasks[0].Status == results.StatusFailed {
		t.Errorf("t00 failed (%s): the GPU failed, not the trial", res.Tasks[0].Reason)
	}
	// A runall on healthy GPUs takes it at once.
	if err := os.WriteFile(quick, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	timer := time.AfterFunc(30*time.Second, func() { stop <- syscall.SIGTERM })
	defer timer.Stop()
	res, output, err = runFile(t, file, Options{Signals: stop, Resources: ResourceOptions{Probe: fakeGPUs(t, 32<<30)},
		Claims: ClaimsOptions{Store: store, Lease: time.Hour}})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Status != results.StatusOK {
		t.Fatalf("the next runall did not run the given-back trial: %v\n%s", err, output)
	}
}
