// Package prom keeps the Prometheus series runall serves with --serve (/metrics): the
// tasks by state and their durations, OOM requeues, each GPU's memory, the container's
// memory, and S3 transfers. Metrics is a consumer of the run's events (event.Stream) for
// the task series and is told the rest by the run (GPU and host samples, transfers). It is
// not runner/metric, which reads the metrics a trial reports of its training.
package prom
