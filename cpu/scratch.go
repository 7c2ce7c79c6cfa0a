package cpu

import "github.com/ndconv/ndconv/nd"

// SeparableScratchBytes is the host memory the separable method's
// temporaries take for p — the accumulator-typed intermediates between
// passes, at most separableScratchLimit where the problem runs in chunks —
// which the planner counts as memory touched for the first time.
func SeparableScratchBytes(p *nd.Problem) int64 {
	return min(separableScratch(p), separableScratchLimit)
}
