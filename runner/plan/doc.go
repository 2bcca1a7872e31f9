// Package plan is the task file, read: it parses bashful-compatible YAML (every error with
// file:line:column), expands for-each, matrix and includes, validates, and hands the runner
// a tree of tasks with their identity (Key, Group) and needs. It knows nothing of the
// scheduler, processes, GPUs (sizes come from package size) or outputs.
package plan
