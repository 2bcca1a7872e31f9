package claims

// StopRenewing stops l's renewals as a runall that died would: for the tests of the
// claims_test package.
func (l *Lease) StopRenewing() { l.stop() }

// ClaimDir is where claims are kept under a sweep's prefix, for the tests of claims_test.
const ClaimDir = claimDir

// ClaimBody is what s writes for a claim with token, for the tests of claims_test.
func (s *Sweep) ClaimBody(token string) []byte { return s.w.claimBody(token) }
