package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/runall/runall/runner/checkprint"
	"github.com/runall/runall/runner/plan"
)

const checkUsage = `Usage: runall check [--tags a,b] [--max-tasks N] [--log-dir DIR] FILE [ARGS...]
       runall check --simulate [--fake-gpus SIZES] [--busy F] [--memory-limit SIZE] [--duration D] [--log-dir DIR] FILE [ARGS...]

Check validates a tasks file and prints its plan: the setup steps in order, each parallel
block's trials with their GPU needs and its early-stopping rule (for sha, hyperband and pbt,
its schedule: the rungs or rounds, how many trials pause at each, and the steps they run
against every trial run to its end), and the S3 transfers. ARGS replace $1..$n and $* in
commands, as for runall run. It exits 0 when the file is valid, 2 with every problem listed
when it is not. Flags may come before or after FILE, as for runall run; -- ends them. A
trial's checkpoint: must resolve to a directory of its own: not /, $HOME, the working
directory, the task file's directory, the log directory --log-dir DIR (the run's) or one
inside it, nor a parent of one of them.

With --simulate it also predicts what a run would do on the GPUs --fake-gpus describes (or
those NVML sees): which trial runs on which GPU and when, each GPU's peak memory and the
makespan, printed as a timeline per GPU. Needs are the declared ones, or those earlier runs
learned for gpu-memory: auto; durations are those earlier runs recorded under --log-dir, or
the --duration guess. It models runall's admission order and placement, not the memory a
trial reaches over time or out-of-memory requeues. Trials that set memory: are packed into
the container's memory limit too (--memory-limit, by default this container's when one
applies), and one whose need the limit can never hold is an error. With --busy F, trials
that share a GPU slow each other as the simulated GPUs' model has it (docs/gpu.md): each
trial's duration is its time alone, of which the share F is the GPU computing; GPUs whose
--fake-gpus entry ends in :mps overlap kernels instead of time-slicing.

Flags:
`

// runCheck loads a tasks file and prints its plan.
func runCheck(_ context.Context, a *app, args []string) error {
	fs := newFlags(a, "check", checkUsage)
	tags := fs.String("tags", "", "keep only tasks with one of these comma-separated `tags` (own or inherited)")
	var sim simulateFlags
	fs.BoolVar(&sim.on, "simulate", false, "predict the run on GPUs: a timeline per GPU, peak memory and makespan")
	fs.StringVar(&sim.fakeGPUs, "fake-gpus", "", "with --simulate: plan for GPUs of these `SIZES` (e.g. 2x32GiB) instead of NVML's (env RUNALL_FAKE_GPUS)")
	fs.DurationVar(&sim.guess, "duration", 0, "with --simulate: the duration `D` of tasks no earlier run recorded (default: such tasks are an error)")
	fs.StringVar(&sim.logDir, "log-dir", ".runall/logs", "the log directory `DIR` the run will use: no checkpoint: may lie in it; with --simulate, its state holds earlier runs' durations and learned needs")
	fs.Float64Var(&sim.busy, "busy", 0, "with --simulate: model compute: the share `F` of each trial's time the GPU computes (default: compute not modelled)")
	fs.StringVar(&sim.memoryLimit, "memory-limit", "", "with --simulate: pack memory: needs into a container memory limit of `SIZE` (default: this container's, when one applies)")
	maxTasks := fs.Int("max-tasks", 0, "refuse a file that expands to more than `N` tasks (default: config max-tasks, else 100000)")
	// Flags after FILE are flags, as for run: check FILE --tags x took --tags and x as $1 $2.
	file, taskArgs, err := parseInterleaved(fs.FlagSet, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp()
		return nil
	case err != nil:
		return fs.mistake()
	case file == "":
		return usagef("check: missing the tasks file")
	}
	plan, err := plan.Load(file, plan.LoadOptions{Args: taskArgs, Tags: splitList(*tags), MaxTasks: *maxTasks})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(a.stderr, "%s: warning: %s\n", w.Pos, w.Msg)
	}
	if err := plan.CheckVars(a.environ()); err != nil {
		return err
	}
	if err := plan.CheckCheckpointDirs(a.environ(), sim.logDir); err != nil {
		return err
	}
	if sim.on {
		return runSimulate(a, plan, sim)
	}
	checkprint.Write(a.stdout, plan)
	return nil
}
