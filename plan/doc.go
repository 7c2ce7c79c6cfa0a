// Package plan chooses how a normalised problem runs: the backend (the
// device) and the method on it (direct, separable, FFT), by a cost model,
// or as the caller forces. One nd.Problem becomes one Executable; backends
// below it never re-derive semantics.
//
// The method is the cheapest in multiply-adds (Implementation.Cost), the
// same on every device for the exact family. The device, under auto, is
// the one where the whole call is estimated faster (cost.go): on a GPU the
// start still to come, the compilations the kernel caches lack, the copies
// and the kernel; on the CPU its rate. The machine's rates come from the
// tuning cache (tuning.go, filled by `ndconv tune`), else measured
// defaults. Prewarm (warm.go) opens a GPU in the background, so that a
// caller reading its input meanwhile finds it ready and auto counts only
// what remains.
//
// Backends are values (backend.go): each implements Backend — its device
// strings, availability, devices, implementations, identity for the tuning
// cache, opening a device and its memory — and is registered once
// (backends.go). The planner asks the Backend of a Device; it never
// switches on a backend's name, and ParseDevice is the one parser of
// device strings. Adding a backend is one file, backend_<name>.go (the
// engine packages cannot import the planner, so their adapters live here),
// and one Register line.
//
// Memory is an open device's memory for the root package's device API:
// DeviceArrays there (host memory for the CPU, a cuda.Array, an OpenCL
// buffer: the backend's DeviceMemory and Buffer) that an Executable for the
// same device runs on with no transfers (ExecuteDevice).
//
// For measurement (the root's BenchPlan and MeasureRoofline, which bench
// and the CLI call): an Executable names its kernel implementation and
// times itself on device arrays (bench.go); a backend may measure its
// device's roofline (RooflineMeasurer, roofline.go) and its rates
// (RateMeasurer).
package plan
