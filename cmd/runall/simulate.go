package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/simulate"
	"github.com/runall/runall/size"
)

// simulateFlags are check's flags for --simulate.
type simulateFlags struct {
	on       bool
	fakeGPUs string
	guess    time.Duration
	logDir   string
	busy     float64 // the share of each trial's time the GPU computes; 0: not modelled
	// memoryLimit is the container memory limit to plan for: "" for this container's.
	memoryLimit string
}

// runSimulate prints what a run of p would do on the GPUs --fake-gpus describes (or NVML's).
func runSimulate(a *app, p *plan.Plan, f simulateFlags) error {
	devs, err := simulatedDevices(a, p, f)
	if err != nil {
		return err
	}
	hostLimit, err := simulatedHostLimit(p, f.memoryLimit)
	if err != nil {
		return err
	}
	compute, err := simulatedCompute(a, f)
	if err != nil {
		return err
	}
	pred, err := simulate.Predict(p, simulate.Options{Devices: devs, LogDir: f.logDir, Guess: f.guess, ReleaseLag: simulate.ReleaseLag,
		HostLimit: hostLimit, Compute: compute})
	if err != nil {
		return err
	}
	writePrediction(a.stdout, pred)
	writeAdaptive(a.stdout, p)
	return nil
}

// timelineWidth is the width of the bars that draw each task's time.
const timelineWidth = 40

// writePrediction prints the prediction as a timeline per GPU, then the makespan.
func writePrediction(w io.Writer, pred *simulate.Prediction) {
	fmt.Fprintf(w, "Predicted run: runall's admission alone (no overhead, no out-of-memory requeues)\n")
	byDev := make([][]simulate.Slot, len(pred.Devices)+1) // the last: tasks on no GPU
	for _, s := range pred.Slots {
		if len(s.Devices) == 0 {
			byDev[len(pred.Devices)] = append(byDev[len(pred.Devices)], s)
		}
		for _, d := range s.Devices {
			byDev[d] = append(byDev[d], s)
		}
	}
	for d, slots := range byDev {
		if len(slots) == 0 {
			continue
		}
		if d < len(pred.Devices) {
			dev := pred.Devices[d]
			fmt.Fprintf(w, "\nGPU %d %s (%s): peak %s, %d tasks\n", d, dev.Name, size.Format(dev.Total), size.Format(pred.Peak[d]), len(slots))
		} else {
			fmt.Fprintf(w, "\nNo GPU: %d tasks\n", len(slots))
		}
		for _, s := range slots {
			need := ""
			if s.Need > 0 {
				need = size.Format(s.Need)
			}
			if s.HostNeed > 0 {
				need = strings.TrimPrefix(need+" + ", " + ") + size.Format(s.HostNeed) + " host"
			}
			guess := " "
			if s.Guessed {
				guess = "*"
			}
			fmt.Fprintf(w, "  %s %7s-%-7s%s %9s  %s\n", bar(s, pred.Makespan), seconds(s.Start), seconds(s.End), guess, need, s.Task.Name)
		}
	}
	if pred.HostLimit > 0 {
		fmt.Fprintf(w, "\nHost memory (limit %s): peak %s\n", size.Format(pred.HostLimit), size.Format(pred.HostPeak))
	}
	fmt.Fprintf(w, "\nPredicted makespan: %s\n", seconds(pred.Makespan))
	for _, n := range pred.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// bar draws [start, end) of the makespan in timelineWidth columns.
func bar(s simulate.Slot, total time.Duration) string {
	if total <= 0 {
		return "|" + strings.Repeat(" ", timelineWidth) + "|"
	}
	from := int(float64(s.Start) / float64(total) * timelineWidth)
	to := max(int(float64(s.End)/float64(total)*timelineWidth+0.5), from+1)
	to = min(to, timelineWidth)
	return "|" + strings.Repeat(" ", from) + strings.Repeat("#", to-from) + strings.Repeat(" ", timelineWidth-to) + "|"
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
