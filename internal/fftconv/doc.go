// Package fftconv is the device-neutral half of FFT convolution: for one
// nd.Problem it decides how the output is cut into overlap-save blocks —
// which axes are transformed, the fast transform length and the outputs
// per block along each, how many blocks are transformed together — by a
// cost model under a memory budget, and names the border-extended input
// region every block needs. It also owns the method's error bound.
// Backends (the CPU engine, and the GPUs through kernels/fftconv.cl with
// cuFFT or kernels/fft.cl) gather each block's input by the border rule,
// transform it, multiply by each kernel's spectrum and transform back;
// they re-derive none of this. docs/perf/fft.md keeps the design notes
// and measurements.
//
// # Overlap-save
//
// Along a transformed axis of kernel length K, a block of B outputs
// starting at output o0 reads the extended input at o0 − Shift …
// o0 − Shift + B + K − 2: L = B + K − 1 values, exactly the transform
// length (values past the block's end, in the last block, are zero). Its
// circular correlation with the kernel, zero-padded to L, equals the
// linear one at the first B positions, which are the block's outputs.
// Axes the kernel does not span (extent 1: channels, batch) are not
// transformed; every index along them is a block of its own.
//
// # Error bound
//
// A float32 FFT convolution differs from the exact sum by rounding in the
// transforms; ErrorBound states the bound the tests enforce, relative to
// Σ|w|·max|x̃| (the kernel's absolute sum times the largest magnitude of
// the extended input). It grows with log₂ of the block size P, not with
// the array: blocks bound it. The worst case of the transforms' 2-norm
// analysis grows as √P·log₂P; with rounding errors that do not conspire,
// observed errors grow as log₂P, and that is what the bound allows.
package fftconv
