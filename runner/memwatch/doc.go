// Package memwatch turns the memory samplers' readings into what the run shows of memory:
// each running trial's GPU memory (a TaskMemory event when it moved enough to matter on a
// screen), each GPU's in the Prometheus series (runner/prom), and the devices' memory over
// time with the container's beside it, kept in the log directory (gpu-samples.jsonl) for the
// report. One sampler feeds it: the GPU admitter's, or, in a run without GPUs, the host
// admitter's.
package memwatch
