//go:build cgo

package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// xidWatch holds the NVML event set that delivers critical Xid events, and the Xids it
// delivered per visible device. It starts on the first Health read, so that a probe only
// asked for memory (runall check, the sampler of a run without health) registers nothing
// with the driver. The driver queues events in the set between reads: draining it on each
// read with a zero timeout never blocks and loses none.
type xidWatch struct {
	mu      sync.Mutex
	started bool
	set     nvml.EventSet // nil where the driver gives none: Xids are then not seen
	watched []bool        // per visible device: its Xid events are registered
	seen    [][]XidEvent
	remap   bool // the driver has nvmlDeviceGetRemappedRows
	now     func() time.Time
}

// maxEventsPerRead bounds one drain, so that a set that keeps answering (a flood of
// events, a misbehaving driver) cannot hold a read for long; the rest wait for the next.
const maxEventsPerRead = 256

// start creates the event set and registers each device's Xid events, once. A driver or
// device that does not support them (NOT_SUPPORTED) is polled only.
func (w *xidWatch) start(lib nvmlLib, gpus []nvmlGPU) {
	if w.started {
		return
	}
	w.started = true
	w.watched = make([]bool, len(gpus))
	w.seen = make([][]XidEvent, len(gpus))
	w.remap = lib.Extensions().LookupSymbol("nvmlDeviceGetRemappedRows") == nil
	set, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return
	}
	some := false
	for i, g := range gpus {
		w.watched[i] = g.dev.RegisterEvents(nvml.EventTypeXidCriticalError, set) == nvml.SUCCESS
		some = some || w.watched[i]
	}
	if !some {
		set.Free()
		return
	}
	w.set = set
}

// drain takes the events queued in the set and files each Xid under its device.
func (w *xidWatch) drain(gpus []nvmlGPU) {
	if w.set == nil {
		return
	}
	for range maxEventsPerRead {
		ev, ret := w.set.Wait(0)
		if ret != nvml.SUCCESS { // TIMEOUT: none left; anything else: try again next read
			return
		}
		if ev.EventType&nvml.EventTypeXidCriticalError == 0 || ev.Device == nil {
			continue
		}
		uuid, ret := ev.Device.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		if i := slices.IndexFunc(gpus, func(g nvmlGPU) bool { return g.uuid == uuid }); i >= 0 {
			w.seen[i] = append(w.seen[i], XidEvent{Xid: ev.EventData, At: w.now()})
		}
	}
}

// xids starts the watch if it has not, drains it, and returns the device's Xids so far.
func (w *xidWatch) xids(lib nvmlLib, gpus []nvmlGPU, index int) (xids []XidEvent, watched, remap bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start(lib, gpus)
	w.drain(gpus)
	return slices.Clone(w.seen[index]), w.watched[index], w.remap
}

// close frees the event set; hold the probe's write lock, before NVML shuts down.
func (w *xidWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set != nil {
		w.set.Free()
		w.set = nil
	}
}

// Health implements Probe: the Xids the event set delivered, then a poll of retired pages,
// remapped rows and the volatile uncorrectable ECC count.
func (p *nvmlProbe) Health(index int) (Health, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	g, err := p.gpu(index)
	if err != nil {
		return Health{}, err
	}
	var h Health
	var remap bool
	h.Xids, h.XidsWatched, remap = p.xids.xids(p.lib, p.gpus, index)
	var errs []error
	read := func(what string, ret nvml.Return, apply func()) {
		switch {
		case ret == nvml.SUCCESS:
			apply()
		case ret == nvml.ERROR_GPU_IS_LOST:
			h.Lost = true
		case !noHealthData(ret):
			errs = append(errs, fmt.Errorf("%s: %w", what, ret))
		}
	}
	pending, ret := g.dev.GetRetiredPagesPendingStatus()
	read("retired pages pending", ret, func() { h.PendingRetirement = pending == nvml.FEATURE_ENABLED })
	if remap {
		_, _, _, failed, ret := g.dev.GetRemappedRows()
		read("remapped rows", ret, func() { h.RemapFailed = failed })
	}
	ecc, ret := g.dev.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	read("uncorrectable ECC errors", ret, func() { h.UncorrectedECC = ecc })
	if err := errors.Join(errs...); err != nil {
		return h, fmt.Errorf("nvml: gpu %d (%s): health: %w", index, g.uuid, err)
	}
	return h, nil
}

// noHealthData is an answer that says the device keeps no such record: retired pages on a
// GPU that remaps rows instead, ECC on a GPU without it, a call the driver lacks.
func noHealthData(ret nvml.Return) bool {
	switch ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NOT_FOUND:
		return true
	}
	return false
}
