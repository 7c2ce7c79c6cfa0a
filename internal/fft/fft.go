package fft

import (
	"runtime"

	"github.com/ndconv/ndconv/nd"
)

// FFT is a plan for complex transforms of one length.
type FFT struct {
	s    stages
	work []complex64
}

// NewFFT returns a plan for complex sequences of length n ≥ 1. Any n
// works; lengths 2^a·3^b·5^c·7^d are fast.
func NewFFT(n int) *FFT {
	if n < 1 {
		panic("fft: length < 1")
	}
	return &FFT{s: newStages(n), work: make([]complex64, n)}
}

// Len is the sequence length.
func (t *FFT) Len() int { return t.s.n }

// Forward computes the coefficients of src into dst and returns dst; a nil
// dst is allocated, and dst may be src. It panics if a length differs from
// Len.
func (t *FFT) Forward(dst, src []complex64) []complex64 { return t.transform(dst, src, false) }

// Inverse computes the unnormalised inverse of src into dst (n times the
// sequence whose coefficients src holds) and returns dst, as Forward.
func (t *FFT) Inverse(dst, src []complex64) []complex64 { return t.transform(dst, src, true) }

func (t *FFT) transform(dst, src []complex64, inverse bool) []complex64 {
	if dst == nil {
		dst = make([]complex64, t.s.n)
	}
	if len(src) != t.s.n || len(dst) != t.s.n {
		panic("fft: length mismatch")
	}
	copy(dst, src)
	t.s.run(dst, t.work, 1, 0, 1, inverse)
	return dst
}

// NextFast returns the smallest n' ≥ n of the form 2^a·3^b·5^c·7^d.
func NextFast(n int) int { return nextFast(n, false) }

// NextFastEven is NextFast restricted to even lengths, as the real
// transforms of an N-D plan need along their last axis.
func NextFastEven(n int) int { return nextFast(n, true) }

func nextFast(n int, even bool) int {
	for m := max(n, 1); ; m++ {
		if (!even || m%2 == 0) && IsFast(m) {
			return m
		}
	}
}

// IsFast reports whether n ≥ 1 has no prime factor above 7.
func IsFast(n int) bool {
	if n < 1 {
		return false
	}
	for _, p := range []int{2, 3, 5, 7} {
		for n%p == 0 {
			n /= p
		}
	}
	return n == 1
}

// parallelFor calls fn(worker, item) for every item in [0, n) on up to
// workers goroutines, worker being a dense index for per-worker scratch.
// A panic on a worker (a bug) is raised again on the caller's goroutine,
// where the entry points recover it; on the worker it would end the
// process.
func parallelFor(workers, n int, fn func(worker, item int)) {
	if err := nd.ForEach(workers, n, nil, fn); err != nil {
		panic(err)
	}
}

func defaultWorkers(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// passNanos is the measured time of one pass of the pure-Go passes per
// complex element, by radix, on one core of the development machine (an
// AVX-512 EPYC at 2 cores, 16 sequences at once, the fastest of 300
// runs); larger odd factors run the generic butterfly, genericPassNanos
// per unit of radix. rowNanos and columnNanos are the per-element costs
// around the passes: the rows' transposes and real pre- or
// post-processing, a column chunk's copies in and out.
var passNanos = map[int]float64{2: 1.1, 3: 1.05, 4: 1.1, 5: 1.9, 7: 2.8}

const (
	genericPassNanos = 0.8
	rowNanos         = 4
	columnNanos      = 2
)

// vectorPassNanos, vectorRowNanos and vectorColumnNanos are the same
// where the SIMD loops run, fitted (within about 20 %) to the CPU time
// of 20 shapes' forward transforms on one core of the loaded development
// machine, 2-D blocks and batches of rows from 2·10³ to 5·10⁵ values.
// They are memory-bound: a pass costs about the same whatever its radix,
// so fewer, larger radices win.
var vectorPassNanos = map[int]float64{2: 0.3, 3: 0.22, 4: 0.27, 5: 0.2}

const (
	vectorRowNanos    = 0.3
	vectorColumnNanos = 0.3
)

// Vectorised reports whether the SIMD passes run on this CPU and build.
func Vectorised() bool { return len(simd.passes) > 0 }

// Nanos estimates the time, in nanoseconds on one core, of one real N-D
// forward (or inverse) transform of the given shape (last axis even): the
// rows' half-length transforms and their pre- and post-processing, and
// every other axis's transform of the half spectrum with its gather into
// column chunks. Callers compare decompositions with it.
func Nanos(shape []int) float64 {
	rank := len(shape)
	half := 1.0
	for _, n := range shape[:rank-1] {
		half *= float64(n)
	}
	last := shape[rank-1]
	half *= float64(last/2 + 1)
	row, column := float64(rowNanos), float64(columnNanos)
	if Vectorised() {
		row, column = vectorRowNanos, vectorColumnNanos
	}
	perElement := row + passes(last/2)
	for _, n := range shape[:rank-1] {
		if n > 1 {
			perElement += column + passes(n)
		}
	}
	return half * perElement
}

// passes is the time per element of a length-n complex transform.
func passes(n int) float64 {
	t := 0.0
	for _, r := range factorize(n) {
		if c, ok := vectorPassNanos[r]; ok && simd.passes[r] != nil {
			t += c
		} else if c, ok := passNanos[r]; ok {
			t += c
		} else {
			t += genericPassNanos * float64(r)
		}
	}
	return t
}
