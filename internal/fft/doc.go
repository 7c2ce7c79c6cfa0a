// Package fft is ndconv's own single-precision fast Fourier transform: the
// CPU engine's FFT convolution is built on it (every FFT on the Go module
// proxy works in complex128 only, twice the memory traffic of what a
// float32 convolution needs).
//
// It owns complex64 transforms of any length — mixed radix 4, 2, 3, 5, 7
// and any other odd factor, fast for lengths 2^a·3^b·5^c·7^d (NextFast finds them) —
// real-to-complex and complex-to-real transforms by the half-length trick,
// and N-D real transforms as successive 1-D transforms along each axis,
// multithreaded over rows and planes.
//
// # Algorithm
//
// Every 1-D transform is a Stockham autosort FFT (no bit reversal): one
// pass per radix, reading and writing whole vectors, so that the same
// passes transform one sequence or many at once. Many transforms of length
// n are laid out as n elements of vl values each (x[i*vl + v] is element i
// of sequence v); every butterfly then runs an inner loop over the vl
// sequences with one twiddle factor, which is how the N-D transform walks
// every axis but the last. Rows along the last axis are transposed in
// groups of rowGroup into that layout, transformed, and transposed back.
// Twiddle factors are computed in float64 and rounded once to float32.
//
// # SIMD
//
// On amd64 the passes of radix 2, 3, 4 and 5, the real transforms'
// pre- and post-processing, the spectrum product (MulInto) and the rows'
// transposes (8×8 blocks of complex64 in registers) are assembly generated
// by asm/ (an avo program in a module of its own; go generate runs it):
// AVX-512F, else AVX2 with FMA, chosen at run time with
// golang.org/x/sys/cpu. They vectorise across sequences: complex64 values
// stay interleaved, 8 (AVX-512) or 4 (AVX2) to a vector, a complex
// product being a swap, a multiply and one VFMADDSUB. Where they run,
// rows and column chunks are laid out at a multiple of 8 sequences (the
// extra lanes are transformed and ignored) so that every pass takes
// them; radix 7 and larger odd factors run in Go. The pure-Go loops
// (stage.pass2 … pass5, realPostGo, realPreGo, transposeGo, mul) are the
// twins: the noasm build tag, or any other architecture, selects them
// everywhere. The assembly fuses multiply-adds where the Go loops round
// twice, so the two differ by rounding, within the bounds below; the tests
// compare every instruction set with the twins and run the transform
// tests with each.
//
// # Conventions
//
// Plans are objects, as in gonum's dsp/fourier: NewX does all
// precomputation, Forward and Inverse take (dst, src). Transforms are
// unnormalised: Inverse(Forward(x)) is n·x. The forward transform is
// X[k] = Σ_t x[t]·exp(−2πi·k·t/n); the inverse uses exp(+2πi·k·t/n).
// Plans keep scratch memory and are not safe for concurrent use.
//
// # Accuracy
//
// Each pass adds a few units of float32 roundoff (ε = 2⁻²⁴) relative to
// the data's 2-norm, so a transform of length n has
// ‖X̂ − X‖₂ ≤ ε·passCost(n)·‖X‖₂, passCost being about one per radix-2
// level (log₂ of each radix, plus √R for a generic odd radix R). The
// tests hold every length 1..200 (against a float64 DFT) and long ones
// (against gonum's dsp/fourier) to it; measured errors are below a third
// of it.
//
// docs/perf/fft.md records the design's measurements: each pass's cost,
// what the SIMD passes gave and what limits the FFT convolution now.
package fft

//go:generate sh -c "cd asm && go run . -out ../passes_amd64.s -stubs ../stubs_amd64.go -pkg fft"
