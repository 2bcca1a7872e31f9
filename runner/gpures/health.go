package gpures

import (
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
)

// healthEvery is how often the run reads each GPU's health: a few NVML calls per GPU.
const healthEvery = 2 * time.Second

// healthWatch reads each GPU's health (gpu.Probe.Health) while the run lasts, says each
// fault once, and takes a GPU whose fault needs more than restarting the application
// (gpu/faults.go) out of service: closed to new trials until runall ends
// (admit.Closed.Retire). An application's fault (Xid 13, 31, 43) is said and nothing more.
// What becomes of the trials already on a GPU it took out is its trials' part
// (health_trials.go).
type healthWatch struct {
	mu     sync.Mutex    // check runs on its ticker and as a trial's room asks (trials.Out)
	trials *healthTrials // told of each GPU it takes out of service; nil: none told
	probe  gpu.Probe
	closed *admit.Closed
	every  time.Duration
	say    func(string)
	said   []map[string]bool // per GPU: the faults said
	failed []bool            // per GPU: a failed read was said
	read   time.Time         // when the last read began: a fault the next one finds came after it
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// newHealthWatch watches the probe's GPUs; nil without a probe.
func newHealthWatch(probe gpu.Probe, closed *admit.Closed) *healthWatch {
	if probe == nil {
		return nil
	}
	return &healthWatch{probe: probe, closed: closed, every: healthEvery, stop: make(chan struct{})}
}

// start reads every GPU's health once before the first trial is placed, then every
// h.every until close.
func (h *healthWatch) start(say func(string)) {
	if h == nil {
		return
	}
	h.say = say
	devs, err := h.probe.Devices()
	if err != nil {
		say("gpu health: not watched: " + err.Error())
		return
	}
	h.said = make([]map[string]bool, len(devs))
	h.failed = make([]bool, len(devs))
	for i := range h.said {
		h.said[i] = map[string]bool{}
	}
	h.check()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(h.every)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.check()
			}
		}
	}()
}

// check reads each GPU's health and acts on what is new.
func (h *healthWatch) check() {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, now := h.read, time.Now()
	h.read = now
	for dev := range h.said {
		hl, err := h.probe.Health(dev)
		if err != nil && !h.failed[dev] {
			h.failed[dev] = true
			h.say(fmt.Sprintf("GPU%d: health not read: %v", dev, err))
		}
		for _, f := range hl.Faults() {
			if key := faultKey(f); !h.said[dev][key] {
				h.said[dev][key] = true
				h.act(dev, f, faultSince(f, prev, now))
			}
		}
	}
}

// faultSince is when fault f, found by the read that began at now, may have come. NVML
// stamps an Xid event as runall reads it (after now), and a state read by a poll has no
// time: all that is known of them is that they came after the last read that did not see
// them (prev). A time of its own before the read (a simulated GPU's fault falls due then)
// is taken as it is.
func faultSince(f gpu.Fault, prev, now time.Time) time.Time {
	if !f.At.IsZero() && f.At.Before(now) {
		return f.At
	}
	return prev
}

// act says a fault seen on dev, come after since, taking dev out of service when the fault
// asks for it.
func (h *healthWatch) act(dev int, f gpu.Fault, since time.Time) {
	defer h.trials.seen(dev, len(h.said), f, since) // after it is said
	if !f.OutOfService() {
		h.say(fmt.Sprintf("GPU%d: %s (NVIDIA: %s): recorded; the GPU stays in service", dev, f, f.Resolution()))
		return
	}
	h.closed.Retire(dev, "out of service: "+f.String())
	h.say(fmt.Sprintf("GPU%d out of service: %s (NVIDIA: %s): no new trial is placed on it until runall ends", dev, f, f.Resolution()))
}

// faultKey tells faults apart: each Xid event is one, a state (pending retirement, an ECC
// count) one however long it lasts.
func faultKey(f gpu.Fault) string {
	if f.Kind == gpu.FaultXid {
		return fmt.Sprintf("xid %d at %d", f.Xid, f.At.UnixNano())
	}
	return string(f.Kind)
}

// close stops the watch.
func (h *healthWatch) close() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		close(h.stop)
		h.wg.Wait()
	})
}
