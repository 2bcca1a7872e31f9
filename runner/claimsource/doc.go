// Package claimsource is a run's side of a sweep shared through claims (--claims): every
// runall with the same prefix and task file takes its trials from one queue. A Claimer
// joins the sweep, holds this runall's claims (each watched: a lost one stops its trial),
// records each trial's end for the whole sweep, and concludes it with the merged results;
// its Source is a block's trials as the queue hands them out, the run's sched.Source for
// that block. It is not package claims, the protocol on the object store (sweep.json,
// claims with their leases, records, the merged results file), which knows no run, plan
// or scheduler; this package knows no S3 and no lifecycle: what it tells the run and asks
// of it is its Run interface, given to Open with the rest of its Options.
package claimsource
