// Package runner runs a plan: it wires the stages of the pipeline together. runDriver
// (run.go) only composes the parts and drives them (execute.go); each part is a type of
// its own, given what it needs when it is made, with no pointer back to the driver
// (docs/architecture.md, "Inside the runner package", lists them):
//
//	plan ──▶ source (sched.List, claimsource.Source, searchsource.Source) ──▶ sched.Run (waiting line,
//	admission: a slot, then each resource.Resource of the run's list: host memory, then the
//	GPUs, rooms.go) ──▶ runner/trial's Launcher (built in launcher.go; a trial's steps, each
//	command's hooks and the rooms each resource gives it: MPS, host memory, GPU) ──▶
//	executor.Run (retries, timeout, stop) ──▶ lifecycle (lifecycle.go) ──▶ event.Stream
//	──▶ consumers, in this order (stream.go): the ledger (results), the recorder of the
//	run's end (results file, report, upload, notify), Prometheus (runner/prom), stop-when, early
//	stopping (prune), early stopping that pauses (rounds), each resource's consumer
//	(the GPUs': gpu-sharing: progress), the server (--serve), Options.Consumers, the output; prune, rounds and the output take
//	their events from an event.Queue (their one inbox) on goroutines of their own
//
// A trial travels as a sched.Trial value (its task, its attempt, how often it was passed
// over); it carries no resource: each resource keeps what it holds for it keyed by the
// *sched.Trial (resource.Held), the claimer and the pauser by its *plan.Task. Every transition is one event on the run's stream; the
// ledger learns each result from the events alone. A claims sweep is no consumer: its source
// (runner/claimsource) records a trial as the scheduler tells it the trial ended. A new concern
// is a consumer added in openStream (stream.go), a new source of trials is picked in source
// (sched.go), and a new resource to admit by is a package of its own implementing
// resource.Resource (its admission, each command's rooms, its consumer, its open and close,
// its measuring, its record) and one entry in the list openResources makes (rooms.go):
// runner/gpures (GPU memory, MPS, gpu-sharing: progress, GPU health) and runner/hostres (the
// container's memory) are the two, and the root knows nothing else of either. The
// runner knows no output format, no HTML and no S3 protocol: those are the output, report
// and s3sync packages, reached through events, Options.Record.Report and the sync engine;
// it knows nothing of how the scheduler orders its line or how the executor runs a process.
//
// The concerns that stand apart from the driver are packages of their own beside it, each
// importing nothing of this package and given what it needs as values or small interfaces
// when it is made: runner/claimsource (a --claims sweep's source and held claims) and
// runner/searchsource (search:'s source), each told of the run through its Run interface,
// which sourceRun (sources.go) answers; runner/mask (the secrets and their three gates),
// runner/notify (config notify), runner/prom (the Prometheus series of --serve),
// runner/stopwhen (stop-when: a consumer and the gate a trial passes as it starts),
// runner/shard (--shard: this runall's share of the plan), runner/memwatch (the memory
// samples: TaskMemory, the GPU series, gpu-samples.jsonl), runner/order (a block's order
// of trials) and runner/simulate (check --simulate).
package runner
