// Package plan chooses how a normalised problem runs: the backend (the
// device) and the method on it (direct, separable, and later FFT and the GPU
// kernels), by a cost model, or as the caller forces. One nd.Problem becomes
// one Executable; backends below it never re-derive semantics.
//
// Memory is an open device's memory for the root package's device API:
// DeviceArrays there (host memory for the CPU, a cuda.Array, an OpenCL
// buffer) that an Executable for the same device runs on with no
// transfers (ExecuteDevice).
package plan
