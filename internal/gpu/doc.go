// Package gpu is ndconv's GPU engine, written once for every GPU API, and
// the pieces both bindings (cuda, opencl) share.
//
// Device is what the engine needs of one GPU through one API — buffers,
// pinned host memory, in-order queues with events, kernels built from a
// kernels source with its defines, the device's limits — and a binding
// implements it over its API and nothing more, in the manner of CLBlast's
// clpp11/cupp11. Two capabilities only some devices have are interfaces a
// Device may also implement: Registrar (registering the caller's host
// memory for direct copies, CUDA's cuMemHostRegister: hostreg.go) and
// FFTLibrary (cuFFT's plans).
//
// Above it, the engine: NewDirect, NewSeparable and NewFFT make an Engine
// (or FFTEngine) for one normalised problem, whatever the device.
// Execute runs it from host memory through a pipeline of three queues
// (pipeline.go: chunks of the problem, chunk.Pieces, gathered into pinned
// staging, copied in, computed and copied out with three chunks in
// flight, equal bit for bit to the whole problem); ExecuteDevice runs it
// on device arrays (Array) with no transfers; TimeDevice times it between
// events for the bench. The FFT method (fft.go) transforms with the
// device's library where it has one and kernels/fft.cl elsewhere, and
// falls back to the direct method on inputs a float32 transform cannot
// carry. Pending and Compile are warm-up's: what building an engine's
// kernels will cost, and building them.
//
// Beside the engine: Registry (the process's one open device per key),
// Life (a device's guard against its last Close while operations run),
// TapsBytes and LaunchArgs (every kernel family's arguments), OpenLibrary
// (binding a C library, failures an UnavailableError) and the failure
// classes both bindings report (UnavailableError, LibraryError,
// UnsupportedError, RangeError), which cuda and opencl export under the
// same names. The engine's tests run once on every available device
// (targets_test.go).
package gpu
