package cpu

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
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
	// fftLengths forces the FFT's transform lengths (tests, tuning).
	fftLengths []int
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
// handing out items once ctx is done and then returns ctx's error.
//
// A panic in fn (or in the progress report) is recovered on the goroutine
// it happens on and returned as a *WorkerPanic once every worker has
// stopped: a panic on a worker goroutine cannot be recovered by the caller
// and would end the process, leaving the temporary files of a command
// behind. The panic is still a bug; the caller reports it as one.
func parallel(ctx context.Context, workers, n int, t *tracker, fn func(worker, item int)) error {
	workers = min(workers, n)
	var next atomic.Int64
	var panicked atomic.Pointer[WorkerPanic]
	run := func(w int) {
		defer func() {
			if r := recover(); r != nil {
				panicked.CompareAndSwap(nil, &WorkerPanic{Value: r, stack: debug.Stack()})
			}
		}()
		for ctx.Err() == nil && panicked.Load() == nil {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(w, i)
			t.add()
		}
	}
	if workers <= 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { run(w) })
		}
		wg.Wait()
	}
	if p := panicked.Load(); p != nil {
		return p
	}
	return ctx.Err()
}

// WorkerPanic is a panic recovered in one of the engine's workers: a bug,
// returned as an error so that it reaches the caller's goroutine.
type WorkerPanic struct {
	Value any // what was passed to panic
	stack []byte
}

func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("internal error: panic in a CPU worker: %v", p.Value)
}

// Stack is the panicking goroutine's stack, for a bug report.
func (p *WorkerPanic) Stack() []byte { return p.stack }

// FMAPeak runs rounds of the engine's widest multiply-add loop, with
// nothing loaded or stored, and returns the multiply-adds done: the
// arithmetic peak of one core for the CPU roofline (bench).
func FMAPeak(rounds int) int64 { return simd.FMAPeak(rounds) }

// ISA names the instruction set of the engine's inner loops in use:
// "avx512", "avx2" or "go" (the pure-Go loops), as the environment variable
// NDCONV_SIMD takes them (see the package doc).
func ISA() string { return simd.ISA() }
