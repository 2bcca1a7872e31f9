// Package citest decides what a test does when something it needs from the machine is
// missing (a MinIO server, PyTorch, script(1), the bashful corpus): on a developer's
// machine it skips, saying what to install; in CI (CI=true), where .ci/run installs all of
// it, it fails, so that a missing install step cannot hide behind a green run.
package citest

import (
	"fmt"
	"os"
	"testing"
)

// Unavailable skips t, or fails it in CI, with the reason and how to get what is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: %s", msg)
	}
	t.Skip(msg)
}
