package plan

import (
	"strings"
	"testing"
	"time"
)

// timeout: 0 is no timeout, even under a block that sets one; every: 0 means nothing and
// says so.
func TestZeroDurations(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - name: sweep
    timeout: 1h
    parallel-tasks:
      - {name: bounded, cmd: "true"}
      - {name: unbounded, cmd: "true", timeout: 0s}
      - {name: bare zero, cmd: "true", timeout: 0}
`, LoadOptions{})
	got := map[string]time.Duration{}
	for _, tr := range p.Trials() {
		got[tr.Name] = tr.Timeout
	}
	if got["bounded"] != time.Hour || got["unbounded"] != 0 || got["bare zero"] != 0 {
		t.Errorf("timeouts %v; want bounded 1h, unbounded and bare zero none", got)
	}
	msg := problems(t, `
s3:
  upload:
    - {from: out/, to: "s3://b/p/", every: 0s}
tasks:
  - {name: a, cmd: "true"}
`, LoadOptions{})
	if !strings.Contains(msg, "every: want a duration greater than zero") {
		t.Errorf("every: 0s: %s", msg)
	}
}
