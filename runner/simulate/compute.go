package simulate

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/runall/runall/gpu/gpusim"
)

// Compute is how check --simulate models the compute of trials that share a GPU: each trial's
// recorded (or guessed) duration is its time alone, of which the share Busy is the GPU
// computing; trials packed on a device stretch as the simulated GPUs' model says
// (gpusim.Stretch: time-slicing, or MPS where MPS[d] is set). The zero value models no
// compute: packed trials run as fast as alone, as memory alone would have it.
type Compute struct {
	Busy float64
	MPS  []bool // by device index; missing: time-sliced
}

// pace keeps, while a block is simulated, how much of each running trial's time alone is
// left, and moves the running trials' ends whenever the trials on a device change.
type pace struct {
	c       Compute
	left    map[int]time.Duration // by slot index: its time alone still to run
	stretch map[int]float64       // by slot index: how much slower than alone it runs now
	since   time.Duration         // when left was last brought up to date
}

func newPace(c Compute) *pace {
	if c.Busy <= 0 {
		return nil
	}
	return &pace{c: c, left: map[int]time.Duration{}, stretch: map[int]float64{}}
}

// note says what the prediction assumed of compute.
func (c Compute) note() string {
	if c.Busy <= 0 {
		return "compute is not modelled: trials packed on a GPU run as fast as alone (--busy F models it: docs/gpu.md)"
	}
	return fmt.Sprintf("compute modelled as docs/gpu.md's simulated GPUs share it: each trial's GPU busy share %.2f (--busy), its duration its time alone", c.Busy)
}

// reshape brings the running trials up to now and sets their ends by the stretch each now
// runs at: the most of its devices'. A trial that starts now has all of its time alone left.
func (p *pace) reshape(running *endings, slots []Slot, now time.Duration) {
	if p == nil {
		return
	}
	on := map[int][]gpusim.Load{}
	for _, e := range *running {
		s := slots[e.slot]
		if _, ok := p.left[e.slot]; !ok {
			p.left[e.slot], p.stretch[e.slot] = s.End-s.Start, 1
		} else {
			p.left[e.slot] -= time.Duration(float64(now-p.since) / p.stretch[e.slot])
		}
		for _, d := range s.Devices {
			on[d] = append(on[d], gpusim.Load{Busy: p.c.Busy, SM: 1})
		}
	}
	p.since = now
	for i, e := range *running {
		st := 1.0
		for _, d := range slots[e.slot].Devices {
			st = max(st, gpusim.Stretch(on[d], d < len(p.c.MPS) && p.c.MPS[d]))
		}
		p.stretch[e.slot] = st
		end := now + time.Duration(float64(max(p.left[e.slot], 0))*st)
		(*running)[i].at, slots[e.slot].End = end, end
	}
	heap.Init(running)
}
