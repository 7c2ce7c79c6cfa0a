// Package enginetest holds the case table every ndconv engine is tested
// with — the CPU methods and the GPU engines (directly and through
// internal/gputest) — and the comparison of an engine's output with the
// float64 reference (internal/ref) under a tolerance derived from each
// output's magnitude. It is imported only by tests.
package enginetest
