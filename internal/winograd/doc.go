// Package winograd is the Winograd method's math, device-neutral, and its
// CPU engine: the F(m, r) transforms (exact, from Toom–Cook's points), which
// problems the method serves (Why), the tile a problem takes (New), the
// transformed kernels both engines multiply by, the error bound the tests
// hold both engines to, and the CPU engine that is the method's reference.
//
// Winograd's tiles belong to the fast family (DESIGN §1): results differ
// from the direct method by rounding, within Variant.ErrorBound, relative
// to Σ|w|·max|x| like the FFT's and gemm's. Inputs holding NaN or Inf, or
// values whose transforms could overflow float32, run the direct method.
package winograd
