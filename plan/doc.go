// Package plan chooses how a normalised problem runs: the backend (the
// device) and the method on it (direct, separable, and later FFT and the GPU
// kernels), by a cost model, or as the caller forces. One nd.Problem becomes
// one Executable; backends below it never re-derive semantics.
package plan
