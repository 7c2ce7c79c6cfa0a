// Package ndconv convolves and correlates signals, images, volumes and N-D
// arrays with scipy.ndimage's exact semantics: five border modes with cval,
// origins (even kernels centred as scipy centres them), same/valid/full
// output, filter banks, per-channel filtering, every integer and float
// element type with rounding half to even and saturation.
//
// One-shot calls:
//
//	out, err := ndconv.Correlate(ctx, img, ndconv.Options{Border: ndconv.Nearest}, kernel)
//
// For repeated work on same-shaped data, a Plan does all preparation once and
// reuses its memory:
//
//	plan, err := ndconv.NewPlan(ndconv.Correlation, shape, ndconv.Float32, opts, kernels...)
//	out, err = plan.Execute(ctx, out, in)
//
// A caller that reads its input from a file can start the GPU meanwhile
// (Prewarm) and, knowing the shape from a header, build the plan and
// compile its kernels before the data arrive (Plan.Compile). Under the
// device "auto", Plan.DeviceChoice says why the plan runs where it does.
//
// Plan.ExecuteChunks runs a plan in halo'd chunks (package chunk) and hands
// each chunk's output over in order, bit for bit Execute's, so that inputs
// and outputs larger than memory (a memory-mapped input, an output file)
// stream through bounded host memory. On the CPU a separable kernel
// streams as passes within each input plane, once, and a pass across them
// (the separable method's intermediate held for one chunk of planes);
// FilterPlan.ExecuteChunks streams filters of several terms too.
//
// Plan.ExecuteBlocks runs a plan in N-D blocks (chunk.Grid: every axis
// cut, blocks aligned with a storage's chunks, each a pure function of
// the plan and its index) read from a BlockSource and written whole to a
// BlockSink, a few blocks in flight.
//
// Data that stays on a device between calls lives in device arrays:
//
//	dev, err := ndconv.OpenDevice("cuda:0") // or "opencl:P:D", "cpu"
//	defer dev.Close()                        // frees its arrays, closes its plans
//	plan, err := dev.NewPlan(ndconv.Correlation, shape, ndconv.Float32, opts, kernels...)
//	in, err := dev.Upload(img)
//	out, err := plan.ExecuteDevice(ctx, nil, in) // no transfers
//	result, err := out.Download()
//
// On the CPU device arrays are host memory, so the same code runs
// everywhere with the same bits. Using a closed plan or device, or a freed
// array, is ErrClosed.
//
// # Semantics
//
// For each kernel axis of length k with origin o, correlate computes
// out[i] = Σ_j w[j]·x̃[i + j − (k/2 + o)], x̃ being the input extended by the
// border rule; convolve flips the kernel and uses origin −o − (k even ? 1 : 0).
// Weights with |w| ≤ DBL_EPSILON are ignored, as scipy.ndimage ignores them.
// Sums accumulate in float32, or in float64 for float64 or int32 data or a
// float64 output. See DESIGN.md §1.
//
// # Layers
//
// This package validates and normalises requests (package nd), asks the
// planner (package plan) for an executable, and runs it on a backend
// (packages cpu, cuda, opencl); device memory is plan.Memory's. Errors are returned, never panicked: *nd.ArgumentError
// for a request that cannot be carried out as given, *nd.UnsupportedError
// for an unsupported value, *plan.UnavailableError for a device that is not
// usable here, and the context's error when ctx is cancelled.
//
// # Measurement and tuning
//
// Tools that measure ndconv reach the planner through this package, never
// past it: Devices lists the backends and devices; ParseDevice names one
// (DeviceName); NewBenchPlan times a problem from host memory or on data
// already on the device, with the pipeline's Timeline; MeasureRoofline
// measures a device's copy and multiply-add peaks; TuningCandidates,
// TuningCache, MeasureCPURates and MeasureGPURates are what the tuner
// (package bench's TuneWorkload and TuneRates, `ndconv tune`) stores for
// plans to read.
package ndconv
