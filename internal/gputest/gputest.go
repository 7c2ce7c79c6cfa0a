package gputest

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// Shared is the device a package's tests share, opened on first use and
// held open, so that what it has built (modules, programs) serves every
// test. The zero Shared holds none.
type Shared[D any] struct {
	mu   sync.Mutex
	dev  D
	open bool
}

// Get returns the shared device, opening it with open on first use. Where
// available fails it skips tb, saying "no usable <what> device" and why,
// so that the tests pass on a machine without one — unless
// NDCONV_REQUIRE_<WHAT> is 1 (CI sets NDCONV_REQUIRE_OPENCL where it has
// installed PoCL), where a missing device fails the test instead.
func (s *Shared[D]) Get(tb testing.TB, what string, available func() error, open func() (D, error)) D {
	tb.Helper()
	if err := available(); err != nil {
		if os.Getenv("NDCONV_REQUIRE_"+strings.ToUpper(what)) == "1" {
			tb.Fatalf("no usable %s device, and NDCONV_REQUIRE_%s=1: %v", what, strings.ToUpper(what), err)
		}
		tb.Skipf("no usable %s device: %v", what, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		d, err := open()
		if err != nil {
			tb.Fatal(err)
		}
		s.dev, s.open = d, true
	}
	return s.dev
}

// Current is the device Get returned last (the zero D before any).
func (s *Shared[D]) Current() D {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dev
}

// Forget drops the shared device (a test about to close it), so that the
// next Get opens one again.
func (s *Shared[D]) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero D
	s.dev, s.open = zero, false
}

// Together runs fn(0) … fn(n-1) on n goroutines released at the same
// moment, and waits for them all.
func Together(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// Engine is what Run needs of a backend's engine.
type Engine interface {
	Execute(ctx context.Context, dst, src nd.Array) error
	Close() error
}

// Run executes case c from host memory with the engine newEngine makes for
// its problem, and closes the engine.
func Run[E Engine](c enginetest.Case, newEngine func(*nd.Problem) (E, error)) (nd.Array, error) {
	p, err := c.Spec.Normalize()
	if err != nil {
		return nd.Array{}, err
	}
	e, err := newEngine(p)
	if err != nil {
		return nd.Array{}, err
	}
	defer e.Close()
	dst, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return nd.Array{}, err
	}
	return dst, e.Execute(context.Background(), dst, c.Input)
}

// Spread runs every case through run from n goroutines at once and
// returns the failures, each "<case>: <error or mismatch with the
// reference>", in the cases' order.
func Spread(cases []enginetest.Case, n int, run func(enginetest.Case) (nd.Array, error)) []string {
	return SpreadCheck(cases, n, run, func(c enginetest.Case, got nd.Array) string { return c.Check(got, c.Want()) })
}

// SpreadCheck is Spread with another comparison than the exact family's
// (CheckFFT's, for the FFT method).
func SpreadCheck(cases []enginetest.Case, n int, run func(enginetest.Case) (nd.Array, error), check func(enginetest.Case, nd.Array) string) []string {
	return Each(len(cases), n, func(i int) string {
		c := cases[i]
		got, err := run(c)
		if err != nil {
			return fmt.Sprintf("%s: %v", c.Name, err)
		}
		if msg := check(c, got); msg != "" {
			return c.Name + ": " + msg
		}
		return ""
	})
}

// Workers is how many cases an engine test runs at once on one device. A
// case's time is mostly the host's — building its kernels (NVRTC, the
// OpenCL compiler) and the reference — so as many as the host has cores,
// at least 2 (the device's queue always has work) and at most 8.
func Workers() int { return min(8, max(2, runtime.GOMAXPROCS(0))) }

// MaxFailures is how many failures Each collects before it starts no more
// calls: a broken build fails every case, and the first few say why.
const MaxFailures = 20

// Each calls fn(0) … fn(n-1) from workers goroutines, each taking the next
// index, and returns fn's non-empty results (failures) in index order;
// after MaxFailures it starts no more calls.
func Each(n, workers int, fn func(i int) string) []string {
	results := make([]string, n)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for failed.Load() < MaxFailures {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if results[i] = fn(i); results[i] != "" {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	var failures []string
	for _, r := range results {
		if r != "" {
			failures = append(failures, r)
		}
	}
	return failures
}

// Workload is one problem the engines' timing tests time.
type Workload struct {
	In, Out nd.DType
	Shape   []int
	Kernel  []int // the kernels' shape
	Bank    int   // how many kernels
	Mode    nd.Mode
}

// TimingWorkloads are the timing tests' problems: 8192² float32 and uint8
// images with a 7×7 kernel, a 4096² image with a bank of eight 3×3
// kernels, and a 256³ volume with a 5×5×5 kernel.
func TimingWorkloads() []Workload {
	return []Workload{
		{nd.Float32, nd.Float32, []int{8192, 8192}, []int{7, 7}, 1, nd.Same},
		{nd.Uint8, nd.Uint8, []int{8192, 8192}, []int{7, 7}, 1, nd.Same},
		{nd.Float32, nd.Float32, []int{4096, 4096}, []int{3, 3}, 8, nd.Same},
		{nd.Float32, nd.Float32, []int{256, 256, 256}, []int{5, 5, 5}, 1, nd.Same},
	}
}

// Problem is the workload's request, its kernels drawn from rng,
// normalised.
func (w Workload) Problem(rng *rand.Rand) (*nd.Problem, error) {
	var ks []nd.Kernel
	for range w.Bank {
		ks = append(ks, enginetest.RandomKernel(rng, false, w.Kernel...))
	}
	spec := nd.Spec{Shape: w.Shape, In: w.In, Out: w.Out, Kernels: ks, Mode: w.Mode}
	return spec.Normalize()
}

// RequireTiming skips tb unless NDCONV_TIMING=1: timing is a
// measurement, not a test.
func RequireTiming(tb testing.TB) {
	tb.Helper()
	if os.Getenv("NDCONV_TIMING") != "1" {
		tb.Skip("set NDCONV_TIMING=1 to time the kernel")
	}
}

// TimingProblems skips tb unless NDCONV_TIMING=1 (timing is a
// measurement, not a test), and otherwise yields each of TimingWorkloads
// with its problem, the kernels of all drawn from one seeded generator.
func TimingProblems(tb testing.TB) iter.Seq2[Workload, *nd.Problem] {
	tb.Helper()
	RequireTiming(tb)
	return func(yield func(Workload, *nd.Problem) bool) {
		rng := rand.New(rand.NewPCG(1, 1))
		for _, w := range TimingWorkloads() {
			p, err := w.Problem(rng)
			if err != nil {
				tb.Fatal(err)
			}
			if !yield(w, p) {
				return
			}
		}
	}
}

// Summary reads the timings ms (milliseconds, sorted here) of the
// workload's problem p as their median and minimum, and the median's
// bandwidth (the input read once, the outputs written once) and
// arithmetic rate (every output's taps for every kernel).
func (w Workload) Summary(p *nd.Problem, ms []float64) string {
	slices.Sort(ms)
	n, outputs, taps := 1, 1, 1
	for _, d := range p.InShape {
		n *= d
	}
	for _, d := range p.OutShape {
		outputs *= d
	}
	for _, k := range w.Kernel {
		taps *= k
	}
	bytes := float64(n*w.In.Size() + outputs*w.Bank*w.Out.Size())
	med := ms[len(ms)/2]
	return fmt.Sprintf("%v→%v %v kernel %v bank %d: median %.3f ms (min %.3f), %.0f GB/s, %.0f GFLOP/s",
		w.In, w.Out, w.Shape, w.Kernel, w.Bank, med, ms[0], bytes/med/1e6, 2*float64(outputs*taps*w.Bank)/med/1e6)
}
