package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/claimstest"
	"github.com/runall/runall/runner/shard"
)

// TestRunRefusesSharedSearch: Run itself (not only the CLI) refuses a search sweep that
// shards or claims would split, naming the task's place and the option, before its sampler
// is asked for a trial.
func TestRunRefusesSharedSearch(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"shard", Options{Shard: shard.Shard{Index: 0, Count: 2}}, "tasks.yml:7:9: search: runs in one runall, not with --shard"},
		{"claims", Options{Claims: ClaimsOptions{Store: claimstest.NewMem(), Lease: 2 * time.Second}}, "tasks.yml:7:9: search: runs in one runall, not with --claims"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, out, err := runFile(t, fmt.Sprintf(`
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: v <v>
        cmd: echo runall-metric acc=1
        search:
          ask: 'touch %[1]q/asked; echo "{\"number\": 0, \"params\": {\"v\": 1}}"'
          tell: 'true'
        trials: 2
`, dir), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q\n%s", err, tt.want, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "asked")); err == nil {
				t.Errorf("the sampler was asked for a trial")
			}
		})
	}
}
