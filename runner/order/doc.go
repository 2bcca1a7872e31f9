// Package order puts a block's trials in the order they are offered to admission
// (order: longest-first, file or shuffled), by the durations earlier runs recorded
// (runner/history). The run's waiting line (runner/sched.go), a claims sweep's source and
// check --simulate all offer a block's trials in this order.
package order
