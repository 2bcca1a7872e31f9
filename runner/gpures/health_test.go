package gpures

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
)

// healthProbe reports two GPUs with the health a test sets.
type healthProbe struct {
	gpu.Probe
	health [2]gpu.Health
	err    error
}

func (p *healthProbe) Devices() ([]gpu.Device, error) { return make([]gpu.Device, 2), nil }
func (p *healthProbe) Health(i int) (gpu.Health, error) {
	return p.health[i], p.err
}

// TestHealthWatchSays: each fault is said once; an application's Xid leaves its GPU in
// service, pages pending retirement take it out; a failed read is said once.
func TestHealthWatchSays(t *testing.T) {
	p := &healthProbe{}
	p.health[0] = gpu.Health{Xids: []gpu.XidEvent{{Xid: 13, At: time.Unix(1, 0)}}}
	h := newHealthWatch(p, &admit.Closed{})
	var said []string
	h.every = time.Hour // the test reads through check alone
	h.start(func(s string) { said = append(said, s) })
	defer h.close()
	p.health[1] = gpu.Health{PendingRetirement: true}
	p.health[0].Xids = append(p.health[0].Xids, gpu.XidEvent{Xid: 13, At: time.Unix(2, 0)})
	h.check()
	h.check()
	p.err = errors.New("driver gone")
	h.check()
	h.check()
	want := []string{
		"GPU0: xid 13 (Graphics Engine Exception) (NVIDIA: restart the application): recorded; the GPU stays in service",
		"GPU0: xid 13 (Graphics Engine Exception) (NVIDIA: restart the application): recorded; the GPU stays in service",
		"GPU1 out of service: pages pending retirement (NVIDIA: reset the GPU): no new trial is placed on it until runall ends",
		"GPU0: health not read: driver gone",
		"GPU1: health not read: driver gone",
	}
	if !slices.Equal(said, want) {
		t.Errorf("said:\n%q\nwant:\n%q", said, want)
	}
}
