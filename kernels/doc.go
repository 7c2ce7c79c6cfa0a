// Package kernels holds the GPU kernel sources, written once in OpenCL C,
// and builds the define sets that specialise them for one problem. The
// CUDA backend compiles the very same sources with NVRTC through
// portability.h (which maps OpenCL's built-ins and qualifiers onto CUDA, as
// CLBlast does), the OpenCL backend with the device's OpenCL compiler.
//
// One kernel family per .cl file; common.cl holds what they share: the
// border rule and the rounding into integer outputs, mirroring package nd,
// which the backends' tests compare against. One family per .go file too
// (sepfused.go builds sepfused.cl and sepring.cl, which share their
// arguments): its builder, its decomposition (the Launch's Shape) and
// default, and its tuner candidates; kernels.go holds what the builders
// share. The decompositions the tests run beyond those are
// internal/kerneltest's.
//
// The direct method has four implementations, all adding the same
// products in the same order: tiled.cl (register-blocked work-items over a
// tile staged in local memory; for volumes, correlate_rolling walks the
// planes, each staged once for the KZ outputs that read it, and large banks
// of large kernels take their weights from local memory, four a read),
// rows.cl
// (work-items walking down image columns with no local memory, for large
// images with small kernels), bank.cl (banks of small kernels, whose cost
// is their output: neighbouring work-items hold neighbouring kernels, so
// each store is a whole line of the interleaved output) and direct.cl (the
// plain fallback). The
// separable method runs separable.cl's passes or its last two passes
// fused: in septile.cl's 2-D tiles, each staged whole in one phase, for
// small images, and in sepfused.cl's strips walking down the rows for
// large ones (sepring.cl, the same strips with the Y ring in registers and
// the X pass blocked from staged rows: the default for large float32
// images with 15 to 32 Y taps, a tuner candidate elsewhere); where its three
// passes run along adjacent axes (3-D volumes), sep3.cl runs all three in
// one kernel, walking the planes with the Z pass's ring in registers.
// NewDirect and NewSeparable choose by the problem, or take the tuner's
// work decomposition (Tuning, TuningCandidates); docs/perf/gpu-kernels.md
// keeps each variant's prediction, measurement and profile.
//
// A family's Go builder (NewDirect for direct.cl) turns a normalised
// nd.Problem into a Launch: the source, the defines, the weights and
// geometry to upload, and the work sizes. It depends only on nd (and, for
// FFT convolution, internal/fftconv's device-neutral decomposition and
// internal/fft's table of roots of unity; for winograd.cl,
// internal/winograd's tiles and transformed weights), so
// both backends — and tests without a GPU — use it.
//
// The fast family's kernels beside FFT: gemm.cl (CUDA only, an implicit
// GEMM on the tensor cores, NewGemm) and winograd.cl (CUDA and OpenCL, a
// bank of 3×3, 5×5 or 3×3×3 kernels in Winograd tiles, NewWinograd).
//
// FFT convolution is two families that take their own arguments rather
// than a Launch's: fftconv.cl (gather by the border rule, spectrum
// products, scatter with the direct path's rounding; every backend, its
// row launches sized by FFTConv.GatherGrid and ScatterGrid) and fft.cl
// (Stockham transforms in local memory or pass by pass, where no vendor
// FFT serves: every OpenCL device, and CUDA for kernels spanning more axes
// than cuFFT's 3; launched as FFTConv.TransformSteps lists them), planned
// by NewFFTConv.
package kernels
