package cpu

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// Options tune execution; the zero value uses every core and reports no
// progress.
type Options struct {
	Workers  int // goroutines; 0 means runtime.GOMAXPROCS(0)
	Progress nd.Progress
	// FFTBudget bounds the FFT method's block buffers and kernel spectra,
	// in bytes; 0 means fftconv.DefaultBudget.
	FFTBudget int64
	// Planar makes the direct, FFT and separable engines (NewDirect,
	// NewFFT, NewSeparable where SeparablePlanar) write a bank's output
	// in the planar layout, dst[k*N + voxel] for N output voxels (package
	// nd, BankLayout), where the engines write dst[voxel*K + k]; the
	// other engines do not read it. One kernel has no bank axis: nothing
	// changes.
	Planar bool
	// fftLengths forces the FFT's transform lengths (tests, tuning).
	fftLengths []int
}

// planeVoxels is a planar bank's plane of p (Options.Planar): its output
// voxels, kernel k's plane starting at k times it; 0 where the output is
// interleaved, or has no bank axis (one kernel).
func (o Options) planeVoxels(p *nd.Problem) int {
	if o.Planar && len(p.Kernels) > 1 {
		return product(p.OutShape)
	}
	return 0
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// tracker counts finished work items of one Execute across all its phases.
type tracker struct {
	progress nd.Progress
	done     atomic.Int64
	total    int64
}

func (t *tracker) add() {
	if t.progress != nil {
		t.progress.Report(t.done.Add(1), t.total)
	}
}

// parallel calls fn(worker, item) for every item in [0, n) on up to workers
// goroutines, worker being a dense index for per-worker scratch. It stops
// handing out items once ctx is done and then returns ctx's error. A
// panic in fn (or in the progress report) comes back as an
// *nd.PanicError (nd.ForEach), not as the end of the process.
func parallel(ctx context.Context, workers, n int, t *tracker, fn func(worker, item int)) error {
	err := nd.ForEach(workers, n, func() bool { return ctx.Err() != nil }, func(w, i int) {
		fn(w, i)
		t.add()
	})
	if err != nil {
		return err
	}
	return ctx.Err()
}

// serialWork is the number of multiply-adds (outputs × taps) below which
// a call runs on the calling goroutine, one tile after another: handing
// tiles to a pool costs a few microseconds (goroutines started, idle
// threads woken), more than a second core saves on so little work.
// Measured on a 2-core AVX2 machine (docs/perf/cpu-engine.md): a 3×3
// float32 correlation is as fast on one goroutine as on two up to about
// 128×128 outputs (150 000 multiply-adds).
var serialWork = 1 << 17

// workersFor is the number of goroutines a call of work multiply-adds
// runs on: 1 below serialWork, whatever the options say, else the
// options' workers.
func (o Options) workersFor(work int) int {
	if work < serialWork {
		return 1
	}
	return o.workers()
}

// serial is parallel for one worker: fn(0, item) for every item in [0, n)
// on the calling goroutine, with no pool and no allocation (fn does not
// escape, so its closure stays on the caller's stack). It stops once ctx
// is done and then returns ctx's error; a panic in fn comes back as an
// *nd.PanicError, as from parallel.
func serial(ctx context.Context, n int, t *tracker, fn func(worker, item int)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &nd.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		fn(0, i)
		t.add()
	}
	return ctx.Err()
}

// FMAPeak runs rounds of the engine's widest multiply-add loop, with
// nothing loaded or stored, and returns the multiply-adds done: the
// arithmetic peak of one core for the CPU roofline (bench).
func FMAPeak(rounds int) int64 { return simd.FMAPeak(rounds) }

// ISA names the instruction set of the engine's inner loops in use:
// "avx512", "avx2", "neon" (arm64) or "go" (the pure-Go loops), as the environment variable
// NDCONV_SIMD takes them (see the package doc).
func ISA() string { return simd.ISA() }
