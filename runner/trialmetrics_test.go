package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// TestMetricsPathNeverEnds (issue: a metrics path that never ends hangs runall): a trial
// that leaves a FIFO at its metrics path, and one whose metrics: is a character device,
// are warned about and the run goes on to the next task and its results.
func TestMetricsPathNeverEnds(t *testing.T) {
	type ran struct {
		res *results.Run
		out string
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, out, err := runFile(t, `
tasks:
  - name: fifo
    cmd: mkfifo m.json
    metrics: m.json
  - name: device
    cmd: 'true'
    metrics: /dev/zero
  - name: after
    cmd: echo after
`, Options{})
		done <- ran{res, out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("got %v, want success\n%s", r.err, r.out)
		}
		tasks := byName(r.res)
		if tasks["after"].Status != results.StatusOK {
			t.Errorf("the task after: %s", tasks["after"].Status)
		}
		for name, want := range map[string]string{"fifo": "is not a regular file", "device": "is not a regular file"} {
			if w := strings.Join(tasks[name].MetricWarnings, "\n"); !strings.Contains(w, want) {
				t.Errorf("%s: warnings %q, want %q", name, w, want)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run still waits on a metrics file after 30s")
	}
}
