package checkprint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// TestCheckSaysOnOOM: check prints a block's on-oom among what it does when trials go wrong.
func TestCheckSaysOnOOM(t *testing.T) {
	p := mustLoadYAML(t, `tasks:
  - name: sweep
    on-oom: {halve: batch, min: 8}
    parallel-tasks:
      - name: bs=<batch>
        cmd: python train.py --batch <batch>
        matrix: {batch: [112, 64]}
`, plan.LoadOptions{})
	var b bytes.Buffer
	Write(&b, p)
	if want := "when trials go wrong: on-oom halves <batch> down to 8, at most 3 times, its checkpoint dropped\n"; !strings.Contains(b.String(), want) {
		t.Errorf("check does not say %q:\n%s", want, b.String())
	}
}
