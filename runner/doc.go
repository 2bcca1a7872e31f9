// Package runner runs a plan: it wires the stages of the pipeline together and owns what a
// run shares across them (its id, log directory, mask, the ledger of results).
//
//	plan ──▶ source (sched.List, claims, a sampler) ──▶ sched.Run (waiting line, admission:
//	a slot, then each sched.Resource) ──▶ runTrial / runCommand ──▶ executor.Run (retries,
//	timeout, stop) ──▶ hooks ──▶ event.Stream ──▶ consumers: ledger (results), Prometheus,
//	stop-when, claims, Options.Consumers, the output
//
// A trial travels as a sched.Trial value (task, placement, lease, attempt). Every transition
// is one event on the run's stream (stream.go); a new concern is a consumer there, a new
// source of trials is picked in source (sched.go), a new resource to admit by is appended
// in schedule (sched.go). The runner knows no output format, no HTML and no S3 protocol:
// those are the output, report and s3sync packages, reached through events, Options.Report
// and the sync engine.
package runner
