// Package stopwhen is config stop-when in a run: a consumer of the run's events (Watch.Event)
// that, once a trial's command ends ok with metrics that meet the condition, says so and
// closes the gate every trial passes as it starts (Watch.Gate): the trials not started yet
// are skipped, the running ones finish, and no sampler is asked for more.
package stopwhen
