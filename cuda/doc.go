// Package cuda is ndconv's binding of NVIDIA's CUDA driver API, NVRTC and
// cuFFT, loaded at run time without cgo. A *Device is the engine's
// gpu.Device, with registering the caller's host memory and cuFFT's plans
// as the capabilities only CUDA has. docs/cuda.md says how the libraries
// are found, the rule every driver call follows (a context is current per
// OS thread), the module cache, and the environment variables.
package cuda
