// Package output shows a run to people or machines: the live view for a terminal, plain
// prefixed lines for containers and CI, JSON events for machines, and the summary. It is
// fed the run's events by one goroutine (the runner's output consumer) and reads the
// results at the end; it knows nothing of the scheduler, processes or GPUs.
package output
