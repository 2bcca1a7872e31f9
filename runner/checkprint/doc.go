// Package checkprint is `runall check`'s printout of a plan: the config, the S3 transfers,
// then every task in the order it runs, with what it needs, how its trials are stopped,
// searched and checkpointed, and any setting that differs from the default. It reads a
// *plan.Plan and nothing else; plan knows nothing of it.
package checkprint
