// Package taskfile is the task file as written: its syntax tree, decoded by hand from
// yaml.v3's nodes so that every node keeps its line and column. Decoding follows includes
// ($include, Splice), places YAML's own syntax errors (SyntaxProblem), and reads each key
// into a typed value (sizes, durations, margins, the config: block with its defaults, an
// objective, a notify: target) while collecting every mistake at its node, suggesting the
// nearest key for a typo (Suggest).
//
// It knows nothing of the plan: package plan reads the tree (File, its Tasks, its
// ConfigBlock and S3Block), checks the tasks against where they stand, expands them and
// builds the plan, adding each problem's file. As go-task's taskfile/ast is to its executor,
// this is the file's grammar; the plan is its meaning. It owns the values it reads
// (gpu-isolation's Isolation among them: gpu/mps parses it where MPS starts) and imports
// nothing that starts a process, reads NVML or talks to S3 (its fence, internal/limits).
package taskfile
