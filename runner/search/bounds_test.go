package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/plan"
)

// TestSamplerCommandsBounded: an ask or tell that hangs (with a child holding its pipes)
// ends at its timeout or its context's end, its whole process group killed; one that prints
// more than 1 MiB says so (its output was cut in silence), and one that printed only white
// space is not said to have printed nothing; a multi-line command is quoted by
// its first line as written.
func TestSamplerCommandsBounded(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, ask string
		timeout   time.Duration
		cancel    bool
		want      string
	}{
		{"hangs past its timeout", "sleep 600 & wait", time.Second, false, "no answer within 1s (search: timeout): killed"},
		{"stopped", "sleep 600 & wait", time.Hour, true, "stopped: context canceled"},
		{"prints 2 MiB", `head -c 2097152 /dev/zero | tr '\0' x; echo; echo '{"number": 0, "params": {}}'`, time.Minute, false, "printed more than 1 MiB"},
		{"prints 1.1 MiB of spaces", `head -c 1100000 /dev/zero | tr '\0' ' '; echo '{"number": 0, "params": {}}'`, time.Minute, false,
			"printed more than 1 MiB, of which the rest was left out: it printed only white space (1048576 bytes)"},
		{"multi-line", "echo loading\nexit 3", time.Minute, false, "search: ask `echo loading` (and 1 more lines): exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Sampler{Spec: &plan.Search{Ask: tc.ask, Timeout: tc.timeout}, Dir: dir}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(500*time.Millisecond, cancel)
			}
			done := make(chan error, 1)
			go func() { _, err := s.Ask(ctx); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want %q", err, tc.want)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the ask did not end")
			}
		})
	}
}
