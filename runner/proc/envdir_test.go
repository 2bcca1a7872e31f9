package proc

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The file a sequential task's environment is captured in lives in a private directory
// runall made, which is removed whole at the attempt's end, also when the command put a
// directory with files in the file's place (os.Remove of the file alone left it behind),
// and when it failed; nothing else in the temporary directory is touched.
func TestCaptureDirRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.WriteFile(tmp+"/runall-env-other", []byte("not ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"export X=1", `rm -f "$RUNALL_ENV_OUT"; mkdir "$RUNALL_ENV_OUT"; touch "$RUNALL_ENV_OUT/x"`, "exit 3"} {
		out, _ := run(t, &Attempt{Cmd: cmd, Env: []string{"PATH=/usr/bin:/bin"}, Capture: true})
		if cmd == "export X=1" && !slices.Contains(out.Exported, "X=1") {
			t.Errorf("%s: exported %q, want X=1", cmd, out.Exported)
		}
		ents, _ := os.ReadDir(tmp)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"runall-env-other"}) {
			t.Errorf("%s: the temporary directory holds %s, want only runall-env-other", cmd, strings.Join(names, ", "))
		}
	}
}
