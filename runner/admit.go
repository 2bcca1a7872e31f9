package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/gpu"
)

// The admitter decides which GPU trial may start where, from measured free memory.
//
// On each device it keeps the trials placed there and a baseline: the memory in use when
// none of runall's trials ran on it. Trials that have started but not yet allocated their
// need hold a reservation:
//
//	reserved = max(0, Σ need of runall's trials on the device − (used − baseline))
//
// so that trials launched within a second of each other never count the same free memory
// twice, and a reservation lasts until the device's measured use shows the memory. A trial
// fits where  free − reserved − margin ≥ need. Memory used by anything else (another
// container, a notebook) counts, because "free" is measured. Nothing here matches PIDs:
// inside a container NVML reports the host's.
type admitter struct {
	probe  gpu.Probe
	margin Margin

	mu       sync.Mutex
	snap     []gpu.Device
	snapAt   time.Time
	snapErr  error
	devs     []devState
	learned  map[string]uint64 // group → learned need, bytes (shared with history)
	raised   map[int]uint64    // trial ID → need raised after an out-of-memory failure
	learning map[string]*placement

	torch torchProbe

	cancel context.CancelFunc
	done   chan struct{}
}

type devState struct {
	baseline uint64
	trials   []*placement // in launch order
}

// placement is a trial's place on one or more devices.
type placement struct {
	task     *Task
	devices  []int
	uuids    []string
	need     uint64 // per device; 0 while learning
	learning bool   // the first trial of a gpu-memory: auto group: alone on its device
	peak     uint64 // the most it was seen using on any of its devices (estimate when shared)
	grewAt   time.Time
}

// learnSettle is how long a learning trial's memory must stay flat before the rest of its
// group is admitted at the learned need; a trial that ends sooner is learned from at its end.
const learnSettle = 10 * time.Second

// sampleEvery is how often the devices are measured while GPU trials run.
const sampleEvery = 250 * time.Millisecond

func newAdmitter(probe gpu.Probe, cfg Config) *admitter {
	return &admitter{
		probe:    probe,
		margin:   cfg.GPUMemoryMargin,
		learned:  map[string]uint64{},
		raised:   map[int]uint64{},
		learning: map[string]*placement{},
	}
}

// start measures the devices every sampleEvery until stop, calling onSample after each.
func (a *admitter) start(ctx context.Context, onSample func(devs []gpu.Device, reserved []uint64)) {
	ctx, a.cancel = context.WithCancel(ctx)
	a.done = make(chan struct{})
	a.mu.Lock()
	a.sampleLocked()
	a.mu.Unlock()
	go func() {
		defer close(a.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.mu.Lock()
				a.sampleLocked()
				devs, reserved := slices.Clone(a.snap), a.reservedLocked()
				a.mu.Unlock()
				if onSample != nil && devs != nil {
					onSample(devs, reserved)
				}
			}
		}
	}()
}

func (a *admitter) stop() {
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
}

// sampleLocked measures the devices and updates baselines, peaks and learning.
func (a *admitter) sampleLocked() {
	devs, err := a.probe.Devices()
	a.snapErr = err
	if err != nil {
		return
	}
	a.snap, a.snapAt = devs, time.Now()
	if len(a.devs) != len(devs) {
		a.devs = make([]devState, len(devs))
		for i := range devs {
			a.devs[i].baseline = devs[i].Used
		}
	}
	for i, d := range devs {
		st := &a.devs[i]
		if len(st.trials) == 0 {
			st.baseline = d.Used
			continue
		}
		for p, share := range a.sharesLocked(i) {
			if share > p.peak {
				p.peak, p.grewAt = share, time.Now()
			}
		}
	}
	for group, p := range a.learning {
		if !p.grewAt.IsZero() && time.Since(p.grewAt) >= learnSettle && p.peak > 0 {
			a.learnLocked(group, p)
		}
	}
}

// sharesLocked attributes the growth of a device's use since its baseline to the trials on
// it: in launch order, each up to its need; what exceeds the sum of needs is counted against
// every trial (an upper bound: someone uses more than declared, and it is not known who).
// A trial alone on its device gets exactly its use.
func (a *admitter) sharesLocked(dev int) map[*placement]uint64 {
	st := &a.devs[dev]
	grown := sub(a.snap[dev].Used, st.baseline)
	var declared uint64
	for _, p := range st.trials {
		declared += p.need
	}
	over := sub(grown, declared)
	shares := make(map[*placement]uint64, len(st.trials))
	left := grown
	for _, p := range st.trials {
		s := min(left, p.need)
		left -= s
		shares[p] = s + over
	}
	return shares
}

func (a *admitter) reservedLocked() []uint64 {
	out := make([]uint64, len(a.devs))
	for i := range a.devs {
		out[i] = a.reservedOnLocked(i)
	}
	return out
}

func (a *admitter) reservedOnLocked(dev int) uint64 {
	st := &a.devs[dev]
	var declared uint64
	for _, p := range st.trials {
		declared += p.need
	}
	return sub(declared, sub(a.snap[dev].Used, st.baseline))
}

// errNeverFits is returned by place for a trial no device here can ever hold.
var errNeverFits = errors.New("needs more GPU memory than any device has")

// place finds devices for t now. It returns a placement, or nil and why the trial waits,
// or an error when it can never run here.
func (a *admitter) place(t *Task) (*placement, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if time.Since(a.snapAt) > 100*time.Millisecond {
		a.sampleLocked()
	}
	if a.snap == nil {
		return nil, "", fmt.Errorf("cannot measure GPU memory: %w", a.snapErr)
	}
	want := max(t.GPU.Devices, 1)
	if want > len(a.snap) {
		return nil, "", fmt.Errorf("asks for %d GPUs, %d are visible", want, len(a.snap))
	}
	need, learning, wait := a.needLocked(t)
	if wait != "" {
		return nil, wait, nil
	}
	type cand struct {
		dev   int
		avail uint64
	}
	var cands []cand
	var why []string
	fitsSomewhere := false
	for i, d := range a.snap {
		m := a.margin.For(d.Total)
		if need+m <= d.Total {
			fitsSomewhere = true
		}
		reserved := a.reservedOnLocked(i)
		avail := sub(sub(d.Free, reserved), m)
		exclusive := a.exclusiveLocked(i)
		why = append(why, fmt.Sprintf("GPU%d %s free, %s reserved", i, formatSize(d.Free), formatSize(reserved)))
		switch {
		case exclusive:
			why[len(why)-1] += " (learning a trial's need)"
		case learning && len(a.devs[i].trials) > 0:
		case avail >= need:
			cands = append(cands, cand{i, avail})
		}
	}
	if !fitsSomewhere {
		largest := slices.MaxFunc(a.snap, func(x, y gpu.Device) int { return cmpU(x.Total, y.Total) })
		return nil, "", fmt.Errorf("%w: needs %s, the largest GPU has %s (%s after the %s margin)",
			errNeverFits, formatSize(need), formatSize(largest.Total),
			formatSize(sub(largest.Total, a.margin.For(largest.Total))), formatSize(a.margin.For(largest.Total)))
	}
	if len(cands) < want {
		head := "needs " + formatSize(need)
		if want > 1 {
			head += fmt.Sprintf(" on each of %d GPUs", want)
		}
		if learning {
			head = "learning its GPU memory: needs a GPU with no other trial"
		}
		return nil, head + "; " + strings.Join(why, "; "), nil
	}
	// Best fit: the devices with the least room that still fits, so that big gaps stay
	// for big trials.
	slices.SortStableFunc(cands, func(x, y cand) int { return cmpU(x.avail, y.avail) })
	p := &placement{task: t, need: need, learning: learning}
	for _, c := range cands[:want] {
		p.devices = append(p.devices, c.dev)
		p.uuids = append(p.uuids, a.snap[c.dev].UUID)
		st := &a.devs[c.dev]
		if len(st.trials) == 0 {
			st.baseline = a.snap[c.dev].Used
		}
		st.trials = append(st.trials, p)
	}
	if learning {
		a.learning[t.Group] = p
	}
	return p, "", nil
}

// needLocked is what t needs per device now, whether it is the trial that learns its
// group's need, or why it must wait.
func (a *admitter) needLocked(t *Task) (need uint64, learning bool, wait string) {
	if n, ok := a.raised[t.ID]; ok {
		return n, false, ""
	}
	if !t.GPU.Auto {
		return t.GPU.Memory, false, ""
	}
	if n, ok := a.learned[t.Group]; ok {
		return n, false, ""
	}
	if p, ok := a.learning[t.Group]; ok {
		return 0, false, fmt.Sprintf("waits for %q to measure the group's GPU memory", p.task.Name)
	}
	return 0, true, ""
}

func (a *admitter) exclusiveLocked(dev int) bool {
	for _, p := range a.devs[dev].trials {
		if p.learning {
			return true
		}
	}
	return false
}

// learnLocked fixes a group's need from its learning trial's peak.
func (a *admitter) learnLocked(group string, p *placement) {
	a.learned[group] = learnedNeed(p.peak)
	delete(a.learning, group)
	p.learning = false
	p.need = a.learned[group]
}

// learnedNeed pads a measured peak: sampling can miss a short spike.
func learnedNeed(peak uint64) uint64 {
	const step = 64 << 20
	n := peak + peak/20
	return (n + step - 1) / step * step
}

// release frees a placement when its trial ends.
func (a *admitter) release(p *placement) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if time.Since(a.snapAt) > 50*time.Millisecond {
		a.sampleLocked() // the trial's last peak
	}
	if p.learning {
		if p.peak > 0 && a.learning[p.task.Group] == p {
			a.learnLocked(p.task.Group, p)
		} else {
			delete(a.learning, p.task.Group) // learned nothing: the next trial learns
		}
	}
	for _, d := range p.devices {
		st := &a.devs[d]
		st.trials = slices.DeleteFunc(st.trials, func(q *placement) bool { return q == p })
	}
}

// peak is the most memory the placement's trial was seen using.
func (a *admitter) peak(p *placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return p.peak
}

// raiseAfterOOM raises a trial's need after it ran out of memory: to the peak seen, and at
// least by a quarter, so that the next attempt gets more room. It returns the new need.
func (a *admitter) raiseAfterOOM(t *Task, p *placement, peak uint64) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := p.need
	if cur == 0 {
		cur = peak
	}
	const step = 256 << 20
	need := max(peak, cur+cur/4)
	need = (need + step - 1) / step * step
	// Never more than a device can give: at worst the trial runs alone.
	var cap uint64
	for _, d := range a.snap {
		cap = max(cap, sub(d.Total, a.margin.For(d.Total)))
	}
	if cap > 0 {
		need = min(need, cap)
	}
	a.raised[t.ID] = need
	if t.GPU.Auto {
		a.learned[t.Group] = max(a.learned[t.Group], need)
	}
	return need
}

// trialEnv adds what a GPU trial needs: the devices it was given, and settings that keep
// frameworks from grabbing memory they do not need. The task's own env: wins.
func (a *admitter) trialEnv(env []string, t *Task, p *placement) []string {
	for _, kv := range a.probe.Env(p.devices) {
		k, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, k, v)
	}
	setDefault := func(k, v string) {
		if _, ok := lookupTaskEnv(t, k); !ok {
			env = setEnv(env, k, v)
		}
	}
	setDefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
	setDefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
	env = setEnv(env, "RUNALL_GPU_MEMORY", fmt.Sprint(p.need))
	a.mu.Lock()
	var total uint64
	for _, d := range p.devices {
		if d < len(a.snap) && (total == 0 || a.snap[d].Total < total) {
			total = a.snap[d].Total
		}
	}
	a.mu.Unlock()
	if total > 0 && p.need > 0 {
		frac := fmt.Sprintf("%.3f", float64(p.need)/float64(total))
		env = setEnv(env, "RUNALL_GPU_MEMORY_FRACTION", frac)
		if t.GPU.CapToNeed {
			setDefault("XLA_PYTHON_CLIENT_MEM_FRACTION", frac)
			if _, ok := lookupTaskEnv(t, "PYTORCH_CUDA_ALLOC_CONF"); !ok && a.torch.supportsFractionConf(env) {
				conf := "per_process_memory_fraction:" + frac
				if old, ok := lookupEnv(env, "PYTORCH_CUDA_ALLOC_CONF"); ok && old != "" {
					conf = old + "," + conf
				}
				env = setEnv(env, "PYTORCH_CUDA_ALLOC_CONF", conf)
			}
		}
	}
	return env
}

func lookupTaskEnv(t *Task, name string) (string, bool) {
	for _, v := range t.Env {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// learnedByName reports learned needs by the name of each group's first trial.
func (a *admitter) learnedByName(plan *Plan) map[string]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]uint64{}
	seen := map[string]bool{}
	walkAll(plan.Tasks, func(t *Task) {
		if t.GPU == nil || !t.GPU.Auto || seen[t.Group] {
			return
		}
		seen[t.Group] = true
		if n, ok := a.learned[t.Group]; ok {
			out[t.Name] = n
		}
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func formatSize(b uint64) string { return gpu.FormatSize(b) }
