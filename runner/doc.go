// Package runner runs a plan: it wires the stages of the pipeline together. runDriver
// (run.go) only composes the parts and drives them (execute.go); each part is a type of
// its own, given what it needs when it is made, with no pointer back to the driver:
//
//	plan ──▶ source (sched.List, claimSource, searchSource) ──▶ sched.Run (waiting line,
//	admission: a slot, then each sched.Resource) ──▶ launcher (launch.go: a trial's steps;
//	command.go: one command's hooks) ──▶ executor.Run (retries, timeout, stop) ──▶
//	lifecycle (lifecycle.go) ──▶ event.Stream ──▶ consumers: the ledger (results), the
//	recorder of the run's end (results file, report, upload, notify), Prometheus,
//	stop-when, early stopping, claims, Options.Consumers, the output
//
// A trial travels as a sched.Trial value (task, placement, lease, attempt). Every transition
// is one event on the run's stream; the ledger learns each result from the events alone. A
// new concern is a consumer added in openStream (stream.go), a new source of trials is
// picked in source (sched.go), a new resource to admit by is appended in schedule
// (sched.go). The runner knows no output format, no HTML and no S3 protocol: those are the
// output, report and s3sync packages, reached through events, Options.Report and the sync
// engine; it knows nothing of how the scheduler orders its line or how the executor runs a
// process.
package runner
