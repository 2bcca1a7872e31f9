// Package envlist reads and sets variables in an environment list, NAME=value pairs in the
// order exec and the shell take them. It is a leaf: the plan (a task's environment) and the
// processes (what they are started with) both use it.
package envlist

import "strings"

// Lookup is the value of name in env, a list of NAME=value pairs. When a name appears more
// than once the last wins, as it does for exec and the shell.
func Lookup(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if strings.HasPrefix(env[i], prefix) {
			return env[i][len(prefix):], true
		}
	}
	return "", false
}

// Set sets name to value in env, in place of the value Lookup would find, or at the end.
func Set(env []string, name, value string) []string {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if strings.HasPrefix(env[i], prefix) {
			env[i] = prefix + value
			return env
		}
	}
	return append(env, prefix+value)
}
