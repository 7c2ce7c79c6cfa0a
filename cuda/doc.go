// Package cuda is ndconv's binding of NVIDIA's CUDA driver API, NVRTC and
// cuFFT, loaded at run time without cgo: it owns finding and binding the
// libraries and their errors, devices and their primary contexts, device
// and pinned memory, streams and events, compiling kernels with NVRTC
// through the module cache, and launching them. A *Device is the engine's
// gpu.Device (package internal/gpu writes the engine once for every GPU
// API), with registering the caller's host memory and cuFFT's plans as
// the capabilities only CUDA has. docs/cuda.md says how the libraries are
// found, the rule every driver call follows (a context is current per OS
// thread), the module cache's key and files, and the environment
// variables that steer the package.
package cuda
