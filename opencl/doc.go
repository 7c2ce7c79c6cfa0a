// Package opencl is ndconv's binding of the OpenCL ICD loader: it serves
// the GPU engine (internal/gpu) any OpenCL device — AMD, Intel and NVIDIA
// GPUs, PoCL on the CPU — as a gpu.Device, loading the library at run time
// (no cgo) and building programs through the program-binary cache.
// docs/opencl.md describes how.
package opencl
