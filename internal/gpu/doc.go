// Package gpu is ndconv's GPU engine, written once above the Device
// interface that the cuda and opencl bindings implement: the engines
// (NewDirect, NewSeparable, NewFFT, NewGemm, NewWinograd) that run one
// normalised problem from host memory through a pipeline of queues or on
// device arrays, their warm-up (Pending, Compile), and what both bindings
// share — the registry of open devices, free lists, registered host
// memory, launch arguments, library loading and the failure classes.
// Measurements are in docs/perf (gpu-host.md, and each method's file).
package gpu
