package runner

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/results"
)

// handoff pauses (or prunes) trial c at its first step, and keeps when c's turn ended and
// when d, which waits for c's GPU room, started.
type handoff struct {
	pause     bool
	p         Pauser
	stop      executor.Stopper
	mu        sync.Mutex
	cEnd, dGo time.Time
}

func (h *handoff) UsePauser(p Pauser)            { h.p = p }
func (h *handoff) UseStopper(s executor.Stopper) { h.stop = s }

func (h *handoff) Event(ev event.Event, _ func(event.Event)) {
	if ev.Task == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case ev.Kind == event.TaskMetric && ev.Task.Name == "c" && ev.Step == 1:
		if h.pause {
			h.p.PauseAt(ev.Task, 1, "bench", results.StatusPruned)
		} else {
			go h.stop.Stop(ev.Task, results.StatusPruned, "bench")
		}
	case ev.Kind == event.TaskEnded && ev.Task.Name == "c" && (ev.End == event.EndPause || ev.End == event.EndFinal) && h.cEnd.IsZero():
		h.cEnd = ev.Time
		if ev.End == event.EndPause {
			go h.p.End(ev.Task, results.StatusPruned, "bench")
		}
	case ev.Kind == event.TaskStarted && ev.Task.Name == "d":
		h.dGo = ev.Time
	}
}

// handoffFile: c checkpoints its first step and would then run a minute; d waits for its room.
const handoffFile = `
config: {order: file}
tasks:
  - name: sweep
    gpu-memory: 10GiB
    parallel-tasks:
      - {name: c, checkpoint: ck, cmd: 'mkdir -p ck; echo 1 > ck/step; echo runall-metric acc=0.1; echo runall-checkpoint step=1; sleep 60 & wait'}
      - {name: d, cmd: 'echo runall-metric acc=0.9'}
`

// BenchmarkPausedRoom: the GPU room of a paused trial reaches the next waiting trial as fast
// as a pruned trial's does. A simulated 16 GiB GPU holds one 10 GiB trial at a time; c is
// paused (after its checkpoint of step 1 landed) or pruned at its first step; the gap is from
// the end of c's turn to d's start, as the stream tells them.
//
//	go test -run '^$' -bench PausedRoom -benchtime 20x ./runner
func BenchmarkPausedRoom(b *testing.B) {
	for _, kind := range []string{"paused", "pruned"} {
		b.Run(kind, func(b *testing.B) {
			var gaps []float64
			for range b.N {
				h := &handoff{pause: kind == "paused"}
				_, out, err := runFile(b, handoffFile, Options{Consumers: []event.Consumer{h}, Resources: ResourceOptions{Probe: fakeGPUs(b, 16<<30)}, Grace: 5 * time.Second})
				if err != nil || h.cEnd.IsZero() || h.dGo.IsZero() {
					b.Fatalf("run: %v; c ended %v, d started %v\n%s", err, h.cEnd, h.dGo, out)
				}
				gaps = append(gaps, float64(h.dGo.Sub(h.cEnd).Microseconds())/1000)
			}
			slices.Sort(gaps)
			b.ReportMetric(gaps[len(gaps)/2], "median-ms")
			b.ReportMetric(gaps[len(gaps)-1], "max-ms")
		})
	}
}
