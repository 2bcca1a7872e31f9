package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/report"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/shard"
)

const runUsage = `Usage: runall [run] [flags] FILE [ARGS...]

Runs the tasks file FILE: setup tasks in order, parallel trials admitted by free GPU
memory, S3 downloads before and uploads during and after. ARGS replace $1..$n and $* in
commands. Flags may come before or after FILE; put -- before ARGS that look like flags.

At the end it writes the results (each task's outcome, params and metrics) as results.json
and an HTML report as report.html into the run's log directory, prints the report's path,
and POSTs the results to config notify's url when the file has one. Trials report metrics
in their metrics: file or with "runall-metric NAME=VALUE" lines on stdout; config
objective ranks them, config stop-when ends the sweep early (docs/taskfile.md).

Exit codes: 0 every task succeeded (or its failure was ignored), 1 a task failed,
2 usage or task-file error, 129 stopped by SIGHUP, 130 stopped by SIGINT, 131 stopped by
SIGQUIT, 143 stopped by SIGTERM. A slow stdout holds no task back: lines it could not take
in time are left out of it, and said; a closed stdout (runall ... | head) does not stop the
run. Every line is in the tasks' logs.

Flags:
`

// runOptions are the run command's flags.
//
//limits:flat one field per flag of runall run, each bound by name in flags and read once into runner.Options
type runOptions struct {
	tags        string
	output      string
	logDir      string
	results     string
	grace       time.Duration
	graceCkpt   bool
	statusEvery time.Duration
	fakeGPUs    string
	noGPU       bool
	shard       string
	claims      string
	lease       time.Duration
	fresh       bool
	metricsAddr string
	serve       string
	serveAfter  time.Duration
	serveHosts  string
	maxParallel int
	maxTasks    int
	noColor     bool
}

func (o *runOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.tags, "tags", "", "run only tasks with one of these `tags` (comma-separated)")
	fs.StringVar(&o.output, "output", "auto", "output `mode`: auto (live on a terminal, else plain), live, plain or json")
	fs.StringVar(&o.logDir, "log-dir", ".runall/logs", "write each run's task logs, results.json, report.html and GPU memory samples under `DIR`/<run-id>/")
	fs.StringVar(&o.results, "results", "", "also write the results JSON (the log directory's results.json) to `FILE`, where it points (a symlink is followed, a FIFO or device written through, never replaced); a record that cannot be written fails the run")
	fs.DurationVar(&o.grace, "grace", 20*time.Second, "on SIGINT/SIGTERM/SIGHUP/SIGQUIT, wait this long after SIGTERM before SIGKILL; also the most the final uploads get")
	fs.BoolVar(&o.graceCkpt, "grace-checkpoint", false, "on the first signal, give each running trial with checkpoint: up to --grace to keep its next copy before\n"+
		"it is stopped (SIGTERM, SIGKILL after --grace): a preempted Pod loses no more than the copy in progress\n"+
		"(env RUNALL_GRACE_CHECKPOINT=1; the stop can then take up to 3x --grace with the final uploads)")
	fs.DurationVar(&o.statusEvery, "status-every", 30*time.Second, "plain output: print what runs and waits this often")
	fs.StringVar(&o.fakeGPUs, "fake-gpus", "", "simulate GPUs of these `sizes` (e.g. 32GiB,32GiB; 2x80GiB:reserve=512MiB) instead of NVML (env RUNALL_FAKE_GPUS)")
	fs.BoolVar(&o.noGPU, "no-gpu", false, "run GPU tasks without GPU admission: max-parallel-commands is the only limit")
	fs.StringVar(&o.shard, "shard", "", "run shard `I/N` of the trials (env RUNALL_SHARD, or JOB_COMPLETION_INDEX with RUNALL_SHARDS)")
	fs.StringVar(&o.claims, "claims", "", "share the trials with every runall started with this file and this `s3://BUCKET/PREFIX/`:\n"+
		"each claims the next trial it has room for (env RUNALL_CLAIMS, config claims:; see docs/kubernetes.md)")
	fs.DurationVar(&o.lease, "lease", claimsource.DefaultLease, "with --claims: a claim not renewed for this long may be taken over by another runall\n(renewed every third of it; at least 1s, at most 24h)")
	fs.BoolVar(&o.fresh, "fresh", false, "run trials even if an earlier run recorded them as done, and start trials with checkpoint: over")
	fs.StringVar(&o.serve, "serve", "", "serve the run's live report on `ADDR` while it runs (e.g. 127.0.0.1:9090): the page, its state as\n"+
		"JSON (/api/run), each trial's log, Prometheus metrics (/metrics); env RUNALL_SERVE. No authentication:\n"+
		"bind to 127.0.0.1 (kubectl port-forward reaches it) or the Pod's network, never a public address")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "the same as --serve `ADDR` (it serves /metrics too)")
	fs.DurationVar(&o.serveAfter, "serve-after", 0, "with --serve: keep serving the finished run's report this long after it ends\n"+
		"(until SIGTERM or SIGINT), so that a Job's last state can still be looked at")
	fs.StringVar(&o.serveHosts, "serve-hosts", "", "with --serve: also serve requests that name it by these `NAMES` (comma-separated: a Service's\n"+
		"DNS name, .example.com for every name under it, * for any); by default only its address and localhost,\n"+
		"so that no other site's page can read the run (DNS rebinding). Env RUNALL_SERVE_HOSTS")
	fs.IntVar(&o.maxParallel, "max-parallel", 0, "override the file's max-parallel-commands (`N` at once)")
	fs.IntVar(&o.maxTasks, "max-tasks", 0, "refuse a file that expands to more than `N` tasks (default: config max-tasks, else 100000)")
	fs.BoolVar(&o.noColor, "no-color", false, "no colours (also when NO_COLOR is set)")
}

func runRun(_ context.Context, a *app, args []string) error {
	tuneGC(a.getenv)
	o, file, taskArgs, err := parseRunArgs(a, args)
	if err != nil || file == "" {
		return err // file "" with no error: --help was asked for and printed
	}

	// From here on a signal is the run's: while the file loads it ends runall at once, later
	// the scheduler stops the tasks and uploads their outputs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	defer keepRunningWithoutStdout()()
	plan, err := loadOrStop(file, plan.LoadOptions{Args: taskArgs, Tags: splitList(o.tags), MaxTasks: o.maxTasks}, sigs)
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(a.stderr, "%s: warning: %s\n", w.Pos, w.Msg)
	}
	if err := plan.CheckVars(a.environ()); err != nil {
		return err // before anything runs: an unset ${VAR} in an S3 URL must not reach S3
	}
	if err := plan.CheckCheckpointDirs(a.environ(), o.logDir); err != nil {
		return err // before anything runs: a checkpoint: directory is emptied as its trial starts
	}
	if o.maxParallel > 0 {
		plan.Config.MaxParallel = o.maxParallel
	}
	opts, err := o.runnerOptions(a, plan)
	if err != nil {
		return err
	}
	closeGPUs, err := o.openGPUs(a, plan, &opts)
	if err != nil {
		return err
	}
	defer closeGPUs()
	srv, err := newServer(o, a.getenv)
	if err != nil {
		return err
	}
	if srv != nil {
		opts.Server = srv
		defer srv.Close()
	}
	opts.Signals = sigs
	if w := podProgress(a); w != nil {
		opts.Consumers = append(opts.Consumers, w)
	}
	_, err = runner.Run(plan, opts)
	if srv != nil {
		serveAfter(srv, o.serveAfter, err, sigs, a)
	}
	return err
}

// runnerOptions are the run's options from its flags, the task file's config and the
// environment (where it shows and records itself, its shard or claims, its grace), but
// for what must be closed when it ends (the GPU probe, the server).
func (o *runOptions) runnerOptions(a *app, p *plan.Plan) (runner.Options, error) {
	opts := runner.Options{
		Output:    runner.OutputOptions{Stdout: a.stdout, Stderr: a.stderr, StatusEvery: o.statusEvery},
		Record:    runner.RecordOptions{LogDir: o.logDir, ResultsFile: o.results, Report: report.WriteRun},
		Grace:     o.grace,
		Resources: runner.ResourceOptions{NoGPU: o.noGPU},
		Fresh:     o.fresh,
		// The Kubernetes examples turn CheckpointFirst on from their env, without changing args.
		Stop: runner.StopOptions{ReapOrphans: true, CheckpointFirst: o.graceCkpt || a.getenv("RUNALL_GRACE_CHECKPOINT") == "1"},
	}
	var err error
	if o.results != "" {
		if err := outfile.CheckWrite(o.results, p.Sources()...); err != nil {
			return opts, usagef("--results %v", err) // before anything runs, not at its end
		}
	}
	if opts.Shard, err = shardFrom(o.shard, a.getenv); err != nil {
		return opts, usageError{err.Error()}
	}
	if opts.Claims.Prefix, opts.Claims.Lease, err = claimsFrom(*o, p.Config.Claims, opts.Shard, a.getenv); err != nil {
		return opts, err
	}
	warnIndexAlone(a, opts)
	if err := opts.CheckPlan(p); err != nil {
		return opts, usageError{err.Error()}
	}
	if opts.Output.Mode, err = outputMode(o.output, a); err != nil {
		return opts, err
	}
	opts.Output.Color = !o.noColor && output.UseColor(opts.Output.Mode, a.getenv)
	if opts.Output.Mode == output.Live {
		opts.Output.Width = func() int { w, _ := output.TerminalSize(os.Stdout); return w }
	}
	return opts, nil
}

// parseInterleaved parses flags before and after the file name: `runall tasks.yml --no-gpu`
// works as well as `runall --no-gpu tasks.yml`. Everything after -- is an argument.
func parseInterleaved(fs *flag.FlagSet, args []string) (file string, rest []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return "", nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return file, rest, nil
		}
		if file == "" {
			file, args = args[0], args[1:]
		} else if args[0] == "--" || !strings.HasPrefix(args[0], "-") {
			break
		}
		if len(args) > 0 && args[0] == "--" {
			return file, append(rest, args[1:]...), nil
		}
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			rest, args = append(rest, args[0]), args[1:]
		}
		if len(args) == 0 {
			return file, rest, nil
		}
		if args[0] == "--" {
			return file, append(rest, args[1:]...), nil
		}
	}
	return file, append(rest, args...), nil
}

// splitList splits a comma-separated flag value, dropping blanks.
// parseRunArgs reads run's flags, which may come before or after the file.
func parseRunArgs(a *app, args []string) (o runOptions, file string, taskArgs []string, err error) {
	fs := newFlags(a, "run", runUsage)
	o.flags(fs.FlagSet)
	file, taskArgs, err = parseInterleaved(fs.FlagSet, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp()
		return o, "", nil, nil
	case err != nil:
		return o, "", nil, fs.mistake()
	case file == "":
		return o, "", nil, usagef("run: no tasks file given")
	}
	return o, file, taskArgs, nil
}

// loadOrStop loads the task file unless a signal comes first: a file that is slow to read
// (a FIFO, a slow disk) or to expand must not make runall deaf to SIGTERM.
func loadOrStop(file string, opts plan.LoadOptions, sigs <-chan os.Signal) (*plan.Plan, error) {
	type loaded struct {
		p   *plan.Plan
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		p, err := plan.Load(file, opts)
		done <- loaded{p, err}
	}()
	select {
	case l := <-done:
		return l.p, l.err
	case s := <-sigs:
		sig, _ := s.(syscall.Signal)
		return nil, &runner.InterruptedError{Signal: sig}
	}
}

func splitList(s string) []string {
	fields := strings.Split(s, ",")
	for i, f := range fields {
		fields[i] = strings.TrimSpace(f)
	}
	return slices.DeleteFunc(fields, func(f string) bool { return f == "" })
}

func outputMode(flagValue string, a *app) (output.Mode, error) {
	switch flagValue {
	case "auto", "":
		if output.IsTerminal(a.stdout, a.getenv) {
			return output.Live, nil
		}
		return output.Plain, nil
	case "live", "plain", "json":
		return output.Mode(flagValue), nil
	}
	return "", usagef("--output %q: want auto, live, plain or json", flagValue)
}

// shardFrom picks this process's shard: --shard, else RUNALL_SHARD, else Kubernetes'
// JOB_COMPLETION_INDEX with RUNALL_SHARDS.
func shardFrom(flagValue string, getenv func(string) string) (shard.Shard, error) {
	if flagValue == "" {
		flagValue = getenv("RUNALL_SHARD")
	}
	if flagValue != "" {
		return shard.Parse(flagValue)
	}
	idx, n := getenv("JOB_COMPLETION_INDEX"), getenv("RUNALL_SHARDS")
	switch {
	case idx != "" && n != "":
		return shard.Parse(idx + "/" + n)
	case n != "":
		return shard.Shard{}, fmt.Errorf("RUNALL_SHARDS=%s is set but JOB_COMPLETION_INDEX is not: run in an Indexed Job, or use --shard I/N", n)
	}
	return shard.Shard{}, nil
}

// warnIndexAlone says that an Indexed Job's Pod has neither shards nor claims: each of
// them would run every trial. A warning, not an error: a Job of one completion is right.
func warnIndexAlone(a *app, opts runner.Options) {
	idx := a.getenv("JOB_COMPLETION_INDEX")
	if idx == "" || opts.Shard.Count > 0 || opts.Claims.Prefix != "" { // Count 0: no --shard, RUNALL_SHARD(S)
		return
	}
	fmt.Fprintf(a.stderr, "runall: warning: JOB_COMPLETION_INDEX=%s is set (an Indexed Job) without RUNALL_SHARDS or claims: "+
		"every Pod runs every trial; set RUNALL_SHARDS to the Job's completions, or share the trials with claims "+
		"(--claims, RUNALL_CLAIMS or config claims:)\n", idx)
}

// openProbe opens the simulated GPUs when asked (--fake-gpus or RUNALL_FAKE_GPUS), NVML
// otherwise.
func openProbe(a *app, fakeSpec string) (gpu.Probe, error) {
	if fakeSpec == "" {
		fakeSpec = a.getenv(gpusim.EnvGPUs)
	}
	if fakeSpec != "" {
		sizes, err := gpusim.ParseSpec(fakeSpec)
		if err != nil {
			return nil, usageError{"--fake-gpus: " + err.Error()}
		}
		dir := a.getenv(gpusim.EnvState)
		if dir == "" {
			dir = gpusim.DefaultStateDir(os.TempDir())
		}
		pids, err := gpusim.ParsePIDs(a.getenv(gpusim.EnvHostPIDs))
		if err != nil {
			return nil, usageError{err.Error()}
		}
		return gpusim.Open(gpusim.Options{Devices: sizes, StateDir: dir, PIDs: pids})
	}
	cuda, cudaSet := envlist.Lookup(a.environ(), "CUDA_VISIBLE_DEVICES")
	return gpu.OpenNVML(gpu.NVMLOptions{
		CUDAVisibleDevices:    cuda,
		CUDAVisibleDevicesSet: cudaSet,
		NVIDIAVisibleDevices:  a.getenv("NVIDIA_VISIBLE_DEVICES"),
	})
}

// claimsFrom picks the claims prefix: --claims, else RUNALL_CLAIMS, else the file's claims:.
func claimsFrom(o runOptions, fromFile string, shard shard.Shard, getenv func(string) string) (string, time.Duration, error) {
	url := o.claims
	if url == "" {
		url = getenv("RUNALL_CLAIMS")
	}
	if url == "" {
		url = os.Expand(fromFile, getenv)
	}
	switch {
	case url == "":
		return "", 0, nil
	case !strings.HasPrefix(url, "s3://") || strings.TrimPrefix(url, "s3://") == "":
		return "", 0, usagef("--claims %q: want an s3://BUCKET/PREFIX/ URL", url)
	case shard.Count > 1:
		return "", 0, usagef("--claims and --shard (or RUNALL_SHARD, RUNALL_SHARDS) are alternatives: claims balance the trials by themselves")
	case o.lease < claimsource.MinLease:
		return "", 0, usagef("--lease %v: at least %v", o.lease, claimsource.MinLease)
	case o.lease > claims.MaxLease:
		return "", 0, usagef("--lease %v: at most %v (a claim lost with its runall holds its trial that long)", o.lease, claims.MaxLease)
	}
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	return url, o.lease, nil
}
