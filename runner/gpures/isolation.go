package gpures

import (
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// isolation is the GPU room's MPS (gpu-isolation: mps or auto): it makes each trial a client
// of its GPU's MPS server, capped at the room it was admitted with, and after a fault that
// took a server down it closes that GPU to new trials, restarts its server once the GPU's
// trials have gone, and opens it again. It is the part of a GPU room (issue 35's Room) that
// adds to a trial's environment and says what a failed attempt means.
type isolation struct {
	set     *mps.Set
	room    *Resource     // whose trials are placed where
	closed  *admit.Closed // the GPUs closed to new trials
	margin  plan.Margin
	say     func(string)
	mu      sync.Mutex
	closing map[int]bool // GPUs whose server is being restarted
	gpus    int          // how many GPUs it serves
	victims map[int]int  // task ID → how often it was requeued as a fault's bystander
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// openIsolation starts MPS as the plan's gpu-isolation asks, for the admitter's GPUs; nil
// without it. note is what to say of it as the run starts.
func openIsolation(p *plan.Plan, o Options, g *Resource, closed *admit.Closed) (iso *isolation, note string, err error) {
	mode, err := mps.ParseMode(string(p.Config.GPUIsolation))
	if err != nil {
		return nil, "", err
	}
	if g == nil || mode == mps.None {
		return nil, "", nil
	}
	devs, err := o.Probe.Devices()
	if err != nil {
		return nil, "", fmt.Errorf("gpu-isolation: %w", err)
	}
	uuids := make([]string, len(devs))
	for i, d := range devs {
		uuids[i] = d.UUID
	}
	set, note, err := mps.Open(mps.Options{Mode: mode, Environ: o.Environ, UUIDs: uuids, PGID: pgidOf, Run: p.File})
	if err != nil || set == nil {
		return nil, note, err
	}
	if t := plan.MultiGPUTask(p.Tasks); t != nil && !set.Node() {
		_ = set.Close()
		why := fmt.Sprintf("%s: task %q asks for %d GPUs, and a process is the client of one MPS server: runall's run one per GPU",
			t.Pos, t.Name, t.GPU.Devices)
		if mode == mps.On {
			return nil, "", fmt.Errorf("gpu-isolation: mps: %s (use a node's MPS daemon through %s, or gpu-isolation: auto to run without MPS)", why, mps.EnvPipe)
		}
		return nil, "gpu-isolation: auto: running without MPS: " + why, nil
	}
	return &isolation{set: set, room: g, closed: closed, margin: p.Config.GPUMemoryMargin, gpus: len(uuids), closing: map[int]bool{}, victims: map[int]int{}, stop: make(chan struct{})}, note, nil
}

// pgidOf is a live process's group, from /proc.
func pgidOf(pid int) (int, bool) {
	l, ok := proc.LineageOf(pid)
	return l.PGID, ok
}

// start watches the servers' logs and lives until close: a client is tied to its trial while
// it lives, and a server that goes down with no trial to notice is restarted all the same.
// A GPU whose daemon a killed run left serving clients stays closed until they end
// (isolation_leftover.go).
func (i *isolation) start(say func(string)) {
	i.say = say
	i.closeForLeftovers()
	i.wg.Add(1)
	go func() {
		defer i.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-i.stop:
				return
			case <-t.C:
				for dev := range i.gpus {
					i.Check([]int{dev})
				}
				if n%10 == 0 { // each asks a daemon: once a second is soon enough
					i.reapLeftovers()
				}
			}
		}
	}()
}

// Env makes a trial placed at p a client of its GPU's server, capped at the room it was
// admitted with (its need and the margin; a trial still learning its need: the device less
// the margin, not its provisional share, so that it learns its own peak), with its task's
// share of the threads.
func (i *isolation) Env(p *admit.Placement, threads int) []string {
	limit := p.Need + i.margin.For(p.Total)
	if p.Need == 0 {
		limit = p.Total - min(p.Total, i.margin.For(p.Total))
	}
	env, _ := i.set.Env(p.Devices, limit, threads)
	return env
}

// Check looks at the servers of devs and returns the fault that took one down; nil when they
// are well. A fault closes its GPU and starts its recovery, once.
func (i *isolation) Check(devs []int) *mps.Fault {
	for _, dev := range devs {
		d := i.set.Daemon(dev)
		if d == nil {
			continue
		}
		if f := d.Check(); f != nil {
			fc := *f
			fc.Index = dev // a node's daemon serves every GPU
			i.recover(dev, &fc)
			return &fc
		}
	}
	return nil
}

// recover closes dev to new trials and, once its trials have gone, restarts its server and
// opens it again.
func (i *isolation) recover(dev int, f *mps.Fault) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closing[dev] {
		return
	}
	i.closing[dev] = true
	i.closed.Close(dev, "its MPS server restarts after a fault")
	i.say(fmt.Sprintf("GPU%d: MPS server down (%s): GPU closed to new trials until its trials have gone and its server is restarted", dev, f.What))
	i.wg.Add(1)
	go func() {
		defer i.wg.Done()
		for i.room.placed(dev) > 0 {
			select {
			case <-i.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		said := fmt.Sprintf("GPU%d: MPS server restarted; the GPU takes trials again", dev)
		if err := i.set.Daemon(dev).Restart(); err != nil {
			// A closed GPU would hold its trials back for ever: it opens, and CUDA runs a
			// process whose MPS daemon does not answer without MPS, as NVIDIA documents.
			said = fmt.Sprintf("GPU%d: %v: the GPU takes trials again, without MPS (uncapped)", dev, err)
		}
		i.mu.Lock()
		delete(i.closing, dev)
		i.mu.Unlock()
		i.closed.Open(dev)
		i.say(said)
	}()
}

// maxBystander is how often a trial is requeued as a fault's bystander: a trial whose own
// fault the server log did not tie to it (it faulted before its client was seen) would
// otherwise go round for ever.
const maxBystander = 3

// RequeueBystander reports whether the task may go back to the line as a fault's bystander
// once more, and counts it.
func (i *isolation) RequeueBystander(id int) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.victims[id] >= maxBystander {
		return false
	}
	i.victims[id]++
	return true
}

// close stops the watch and runall's own daemons, leaving no process and no pipe directory.
func (i *isolation) close() {
	if i == nil {
		return
	}
	i.once.Do(func() {
		close(i.stop)
		i.wg.Wait()
		if err := i.set.Close(); err != nil && i.say != nil {
			i.say("gpu-isolation: " + err.Error())
		}
	})
}
