package proc

import (
	"os"
	"strings"
)

// readEnvFile parses `env -0` output.
func readEnvFile(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	var vars []string
	for _, kv := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		if i := strings.IndexByte(kv, '='); i > 0 {
			vars = append(vars, kv)
		}
	}
	return vars
}

// shellVars are set by the shell itself; a task "exporting" them means nothing.
var shellVars = map[string]bool{
	"_": true, "SHLVL": true, "PWD": true, "OLDPWD": true, "RUNALL_ENV_OUT": true, "__runall_rc": true,
}

// ExportedChanges returns the variables in after that are new or changed relative to before.
func ExportedChanges(before, after []string) []string {
	old := make(map[string]string, len(before))
	for _, kv := range before {
		k, v, _ := strings.Cut(kv, "=")
		old[k] = v
	}
	var changed []string
	for _, kv := range after {
		k, v, _ := strings.Cut(kv, "=")
		if shellVars[k] || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		if ov, ok := old[k]; !ok || ov != v {
			changed = append(changed, kv)
		}
	}
	return changed
}
