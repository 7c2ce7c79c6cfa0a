// Package gpu is ndconv's GPU engine, written once above the Device
// interface (device.go) that the cuda and opencl bindings implement over
// their APIs: the engines (NewDirect, NewSeparable, NewFFT, NewGemm,
// NewWinograd) that run one normalised problem from host memory through a
// pipeline of queues or on device arrays, their warm-up (Pending,
// Compile), and what both bindings share — the registry of open devices
// and their lifetime guard, free lists, registered host memory, launch
// arguments, library loading and the failure classes they export under
// their own names. The layering is in docs/architecture.md; measurements
// are in docs/perf (gpu-host.md, and each method's file).
package gpu
