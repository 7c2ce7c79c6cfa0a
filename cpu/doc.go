// Package cpu is ndconv's CPU engine: it executes an nd.Problem on the
// host's cores. It owns the methods the planner chooses among — Direct
// (tiled over the output, the kernel applied as it is), Separable (one
// pass per axis with 1-D factors) and FFT (overlap-save blocks laid out by
// internal/fftconv and transformed by internal/fft; within a tested bound
// of the exact methods, not their bits) — and the 1-D row kernels the
// exact two are built on.
//
// Every method tiles its work and runs the tiles on a pool of goroutines.
// Input values are converted to the accumulator type (float32, or float64
// when the Problem is Wide) once per tile, into padded rows whose halo holds
// the border's values, so the inner loops never map an index; a single 2-D
// kernel whose input and output hold the accumulator type reads the
// interior of tiles whose inputs lie inside the image where they are, with
// no copy. Outputs are
// rounded and saturated with nd.Round's rule (nd.Store, or internal/simd's
// uint8/uint16 stores). A separable problem whose intermediates would be
// very large runs chunk by chunk (package chunk).
//
// Direct tiles run four output rows at a time (register blocking), and fold
// a few interleaved samples per position (colour channels) into the rows. A
// filter bank runs inside the register block: eight accumulator sets, its
// kernels × a few rows, each source vector loaded once for all of them.
// A bank's output is interleaved (out[voxel*K + k]) on every method; the
// direct, FFT and (unchunked) separable methods also write it planar
// (out[k*N + voxel], Options.Planar), each kernel's row stored whole into
// its plane.
// Separable slab passes (along any axis but the last) compute eight
// consecutive outputs at a time the same way.
//
// The inner loops — a run of taps over rows of accumulators, a scaled row
// added to another, and the integer rows' conversions — live in
// internal/simd: generated assembly on amd64 (AVX-512 or AVX2 with FMA,
// chosen at run time) and arm64 (NEON), pure Go under the noasm tag and
// elsewhere, all with the same bits. A call whose work is small (under
// serialWork multiply-adds) runs on the calling goroutine, without the
// pool, and a prepared Executable allocates nothing per call. The
// environment variable NDCONV_SIMD, read once at start, caps the choice —
// avx512, avx2 or go (the pure-Go loops; on arm64 go or NEON); a value naming
// an instruction set the CPU lacks falls back to the widest it has below
// it, an unknown value is ignored — so every path can be tested on one
// machine; ISA names the one in use.
//
// docs/perf/cpu-engine.md records what was measured and what limits it;
// docs/perf/fft.md does the same for the FFT method (NewFFT).
package cpu
