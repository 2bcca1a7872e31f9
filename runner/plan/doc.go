// Package plan is the task file, understood: it reads the syntax tree package taskfile
// decodes from bashful-compatible YAML, checks each task's keys against where it stands,
// expands arguments, for-each, matrix and sample:, inherits, validates what spans tasks
// (names, variables, paths, checkpoints), and hands the runner a tree of tasks with their
// identity (Key, Group) and needs. Every problem carries file:line:column. It knows nothing
// of the scheduler, processes, GPUs (sizes come from package size) or outputs, and nothing
// of how `runall check` prints a plan (package checkprint).
package plan
