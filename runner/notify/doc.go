// Package notify is config notify: the run's results JSON POSTed to a webhook when the run
// ends, whatever its status, retried with backoff for a bounded time (within the grace
// period after a signal), redirects not followed. A notification that fails is said and
// changes nothing else: the exit code is the tasks'. Secrets lists what of the URL and
// headers is secret, for runner/mask; nothing it says shows them.
package notify
