// Package eventually is the one wait of runall's end-to-end tests (cmd/runall) and of the
// claims and prune tests: it polls a condition until it holds or a limit passes. Tests use
// it to wait for things to happen (a task to start, a killed process to be gone, a page to
// show a value), never to measure how long they take. runner/sched's tests keep a waitFor
// of their own (under the recorder's lock), and examples/k8s/test, a module of its own,
// cannot import it and has its own.
package eventually

import (
	"testing"
	"time"
)

// Limit is how long True waits: generous, so that a loaded machine is not a failure.
const Limit = 30 * time.Second

// every is how often a condition is asked again.
const every = 20 * time.Millisecond

// Until asks cond until it holds, and says whether it did before limit passed. A test that
// fails with what it saw at the end (a scrape, a page's text) calls it and says that itself.
func Until(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// True waits up to Limit for cond, failing t with what it waited for if it never holds.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Limit, what, cond)
}

// Within waits up to limit for cond, failing t with what it waited for if it never holds.
func Within(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(limit, cond) {
		t.Fatalf("gave up waiting for %s (after %s)", what, limit)
	}
}
