// Package mask keeps the run's secrets and masks them ("****") in everything runall shows:
// the values of variables with secret names (the defaults, config mask:, and the names the
// run gives it: the S3 credentials'), task env: values, NAME=value pairs a command writes or a step exports, and the
// secrets the caller found elsewhere (notify's). A text is masked as it passes one of three
// gates (gate.go): a task as it enters the run, an event on the stream, the run's results
// whole. A Masker is safe for concurrent use; it learns secrets as the run goes.
package mask
