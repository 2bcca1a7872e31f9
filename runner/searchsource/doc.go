// Package searchsource is the trial source of a block whose child sets search: {ask, tell}
// (runner/search runs the user's sampler): it asks the sampler for trials as the scheduler
// has room, makes each one's task (its params data, its secrets learned and masked), and
// tells the sampler how each trial ended, beside the sweep. What it tells the run and asks
// of it is its Run interface; stop-when's gate and the masker come as small interfaces.
package searchsource
