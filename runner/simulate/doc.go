// Package simulate predicts a run of a plan for check --simulate: setup steps one after
// another, each block's trials offered in their order (runner/order) and placed as the
// admitter would (admit.BestFit, the scheduler's waiting line, sched.Line), from their declared or
// learned needs and the durations earlier runs recorded (runner/history). It runs no
// process and reads no device: the GPUs are given as values, and how trials sharing a GPU
// slow each other is gpu/gpusim's model (Compute).
package simulate
