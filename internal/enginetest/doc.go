// Package enginetest holds the case table every ndconv engine is tested
// with — the CPU methods now, the GPU backends later — and the comparison of
// an engine's output with the float64 reference (internal/ref) under a
// tolerance derived from each output's magnitude. It is imported only by
// tests.
package enginetest
