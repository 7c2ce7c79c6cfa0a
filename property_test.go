package ndconv_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// The property test's knobs (environment variables): how many random
// cases, from which seed, up to which rank; NDCONV_PROPERTY_CASE runs one
// case alone (the index a failure names).
const (
	propertyCasesEnv = "NDCONV_PROPERTY_CASES" // default 1000
	propertySeedEnv  = "NDCONV_PROPERTY_SEED"  // default 34
	propertyRankEnv  = "NDCONV_PROPERTY_RANK"  // default 4
	propertyCaseEnv  = "NDCONV_PROPERTY_CASE"
	propertyTraceEnv = "NDCONV_PROPERTY_TRACE" // print each case before it runs
)

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// TestPropertyAgainstRef is issue 34's net for the Go API: random requests
// — ranks 0 to 4 (NDCONV_PROPERTY_RANK for more) with axes of length 0,
// every dtype (float16 and complex included) in and out, banks of 1 to 64
// kernels (across the CPU's bank groups of 2, 4, 8 and 16), real, complex
// and factored kernels, channels (axes), every mode, border with cval,
// origins, correlate and convolve, methods auto, direct, separable and fft
// — through NewPlan and Execute on the CPU, against internal/ref (FFT
// within cpu.FFTBound); then the same plan with its output in place of
// its input, or overlapping it, where the shapes allow, bit for bit the
// out-of-place result. A request either gives the reference's result or
// one typed error (nd.Spec.Normalize's, or a method refusing the
// problem), never a panic. Each case is seeded by (seed, index): a failure
// prints the case in full, and NDCONV_PROPERTY_SEED with
// NDCONV_PROPERTY_CASE reruns it alone.
func TestPropertyAgainstRef(t *testing.T) {
	n := envInt(t, propertyCasesEnv, 1000)
	seed := uint64(envInt(t, propertySeedEnv, 34))
	maxRank := envInt(t, propertyRankEnv, 4)
	first, last := 0, n
	if os.Getenv(propertyCaseEnv) != "" {
		first = envInt(t, propertyCaseEnv, 0)
		last = first + 1
	}
	counts := map[string]int{}
	trace := os.Getenv(propertyTraceEnv) != ""
	for i := first; i < last; i++ {
		c := randomPropertyCase(seed, i, maxRank)
		if trace {
			// A panic on an engine's worker goroutine ends the test binary
			// before the case is reported: this names it first.
			fmt.Fprintf(os.Stderr, "case %d:\n%s\n", i, c)
		}
		outcome, err := c.run()
		counts[outcome]++
		if err != nil {
			t.Errorf("case %d (%s=%d %s=%d): %v\n%s", i, propertySeedEnv, seed, propertyCaseEnv, i, err, c)
		}
	}
	t.Logf("%d cases from seed %d: %v", last-first, seed, counts)
}

// propertyCase is one random request.
type propertyCase struct {
	op      ndconv.Operation
	input   ndconv.Array
	opt     ndconv.Options
	kernels []ndconv.Kernel
	// overlap places the output over the input: 0 none, 1 in place
	// (dst = src), 2 a view shifted by shift elements of the output's
	// type within one buffer.
	overlap, shift int
}

func (c propertyCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\t%v of %v %v (data %v)\n", c.op, c.input.DType(), c.input.Shape, c.input.Data)
	o := c.opt
	fmt.Fprintf(&b, "\toptions: border %v cval %v%+vi origin %v mode %v axes %v dtype %v method %v\n",
		o.Border, o.CVal, o.CValImag, o.Origin, o.Mode, o.Axes, o.DType, o.Method)
	for i, k := range c.kernels {
		fmt.Fprintf(&b, "\tkernel %d: shape %v weights %v imag %v factors %v\n", i, k.Shape, k.Weights, k.Imag, k.Factors)
	}
	fmt.Fprintf(&b, "\toutput: overlap %d shift %d", c.overlap, c.shift)
	return b.String()
}

// bankSizes are the bank sizes drawn, most often 1; the others straddle
// the CPU engine's bank groups.
var bankSizes = []int{1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64}

func randomPropertyCase(seed uint64, index, maxRank int) propertyCase {
	rng := rand.New(rand.NewPCG(seed, uint64(index)))
	rank := 1 + rng.IntN(maxRank)
	if rng.IntN(40) == 0 {
		rank = 0
	}
	bank := bankSizes[rng.IntN(len(bankSizes))]
	// Axis lengths shrink with the rank and the bank, so that the
	// reference's work (outputs × taps × kernels) stays small.
	longest := max(2, []int{24, 12, 7, 5, 4, 3}[min(rank, 6)-1+b2i(rank == 0)]/(1+bank/16))
	shape := make([]int, rank)
	for d := range shape {
		shape[d] = 1 + rng.IntN(longest)
		if rng.IntN(12) == 0 {
			shape[d] = 0
		}
	}
	krank := 1
	if rank > 0 {
		krank = 1 + rng.IntN(rank)
	}
	kshape := make([]int, krank)
	for i := range kshape {
		kshape[i] = 1 + rng.IntN(4+2*b2i(krank == 1))
	}
	dtypes := append(slices.Clone(nd.DTypes), nd.ComplexDTypes...)
	in := dtypes[rng.IntN(len(dtypes))]
	c := propertyCase{op: ndconv.Operation(rng.IntN(2)), input: enginetest.RandomArray(rng, in, shape...)}
	complexKernels := rng.IntN(6) == 0
	for range bank {
		switch {
		case complexKernels:
			k := enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...)
			k.Imag = enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...).Weights
			c.kernels = append(c.kernels, k)
		case rng.IntN(3) == 0:
			c.kernels = append(c.kernels, enginetest.RandomFactors(rng, kshape...))
		default:
			c.kernels = append(c.kernels, enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...))
		}
	}
	o := &c.opt
	o.Device = "cpu"
	o.Border = nd.Border(rng.IntN(5))
	o.CVal = math.Round((rng.Float64()*10-5)*8) / 8
	if in.IsComplex() && rng.IntN(2) == 0 {
		o.CValImag = math.Round((rng.Float64()*10-5)*8) / 8
	}
	o.Mode = nd.Mode(rng.IntN(3))
	o.Method = ndconv.Method(rng.IntN(4))
	if rank > 0 && rng.IntN(3) == 0 {
		o.Axes = rng.Perm(rank)[:krank]
		for i := range o.Axes {
			if rng.IntN(2) == 0 {
				o.Axes[i] -= rank // counted from the end
			}
		}
	}
	if rng.IntN(2) == 0 {
		o.Origin = make([]int, krank)
		for i, k := range kshape {
			o.Origin[i] = rng.IntN(k) - k/2
		}
	}
	if rng.IntN(4) == 0 {
		o.DType = dtypes[rng.IntN(len(dtypes))]
	}
	if rng.IntN(3) == 0 {
		c.overlap = 1 + rng.IntN(2)
		c.shift = rng.IntN(9) - 4
	}
	return c
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spec is the request as nd.Spec states it, for the reference.
func (c propertyCase) spec() nd.Spec {
	o := c.opt
	return nd.Spec{Shape: c.input.Shape, In: c.input.DType(), Out: o.DType, Kernels: c.kernels, Axes: o.Axes,
		Origin: o.Origin, Border: o.Border, CVal: o.CVal, CValImag: o.CValImag, Mode: o.Mode, Convolve: c.op == ndconv.Convolution}
}

// run executes the case and returns its outcome (for the test's tally) and
// what went wrong, if anything.
func (c propertyCase) run() (outcome string, err error) {
	defer func() {
		if r := recover(); r != nil {
			outcome, err = "panic", fmt.Errorf("panic: %v", r)
		}
	}()
	spec := c.spec()
	problem, specErr := spec.Normalize()
	p, err := ndconv.NewPlan(c.op, c.input.Shape, c.input.DType(), c.opt, c.kernels...)
	var argErr *nd.ArgumentError
	var unsErr *nd.UnsupportedError
	typed := errors.As(err, &argErr) || errors.As(err, &unsErr)
	// Options nd.Spec does not see: a negative worker count, a method
	// that is none.
	if specErr == nil && (c.opt.Workers < 0 || c.opt.Method > ndconv.FFT) {
		specErr = fmt.Errorf("workers %d, method %v", c.opt.Workers, c.opt.Method)
	}
	switch {
	case specErr != nil && err == nil:
		return "error", fmt.Errorf("NewPlan accepted a request nd.Spec refuses (%v)", specErr)
	case specErr != nil && !typed:
		return "error", fmt.Errorf("NewPlan: %v (%T), not a typed error", err, err)
	case specErr != nil:
		return "refused", nil
	case err != nil && typed && c.opt.Method == ndconv.Separable:
		return "method refused", nil // kernels neither factored nor rank-1
	case err != nil && typed && c.opt.Method == ndconv.FFT:
		return "method refused", nil // a float64 problem, or one tap
	case err != nil:
		return "error", fmt.Errorf("NewPlan: %w", err)
	}
	defer p.Close()
	tc := enginetest.Case{Spec: spec, Input: c.input}
	got, err := p.Execute(ctx, ndconv.Array{}, c.input)
	if err != nil {
		return "error", fmt.Errorf("Execute: %w", err)
	}
	if !slices.Equal(got.Shape, p.Shape()) {
		return "error", fmt.Errorf("Execute's shape %v, the plan's %v", got.Shape, p.Shape())
	}
	var msg string
	switch {
	case p.Method() == ndconv.FFT && got.Len() > 0:
		msg, err = checkFFT(tc, problem, got)
		if err != nil {
			return "error", err
		}
	case problem.Complex():
		re, im := tc.WantComplex()
		msg = tc.CheckComplex(got, re, im)
	default:
		msg = tc.Check(got, tc.Want())
	}
	if msg != "" {
		return "wrong", fmt.Errorf("%v on %s: %s", p.Method(), p.Device(), msg)
	}
	if problem.Bank {
		if outcome, err := c.runPlanar(got); err != nil {
			return outcome, err
		}
	}
	if c.overlap == 0 {
		return "ran", nil
	}
	return c.runOverlapping(p, got)
}

// runPlanar plans the case again with Options.BankLayout Planar and
// compares its output with inter, the interleaved one, moved (numpy's
// moveaxis(inter, -1, 0)), bit for bit.
func (c propertyCase) runPlanar(inter ndconv.Array) (string, error) {
	opt := c.opt
	opt.BankLayout = ndconv.Planar
	p, err := ndconv.NewPlan(c.op, c.input.Shape, c.input.DType(), opt, c.kernels...)
	if err != nil {
		return "error", fmt.Errorf("NewPlan, planar: %w", err)
	}
	defer p.Close()
	got, err := p.Execute(ctx, ndconv.Array{}, c.input)
	if err != nil {
		return "error", fmt.Errorf("Execute, planar: %w", err)
	}
	want := moveBankAxis(inter)
	if !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Bytes(), want.Bytes()) {
		return "wrong", fmt.Errorf("planar %v: not the interleaved %v with its bank axis first", got.Shape, inter.Shape)
	}
	return "planar", nil
}

// runOverlapping runs p again with its output over its input — in place,
// or in one buffer shifted by c.shift elements of the output — and
// compares the result with want, the out-of-place one, bit for bit.
func (c propertyCase) runOverlapping(p *ndconv.Plan, want ndconv.Array) (string, error) {
	in, out := c.input.DType(), p.DType()
	if c.overlap == 1 {
		if in != out || !slices.Equal(c.input.Shape, p.Shape()) {
			return "ran", nil // no output can be its input
		}
		x := clone(c.input)
		got, err := p.Execute(ctx, x, x)
		if err != nil {
			return "error", fmt.Errorf("Execute in place: %w", err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			return "wrong", errors.New("in place: other bits than out of place")
		}
		return "in place", nil
	}
	// One buffer holding both, the output shift elements (of its own
	// type) after the input's start, or before it.
	inBytes, outBytes := c.input.Len()*in.Size(), want.Len()*out.Size()
	unit := out.Size()
	at, to := 0, c.shift*unit
	if c.shift < 0 {
		at, to = -c.shift*unit, 0
	}
	buf := make([]complex128, (max(at+inBytes, to+outBytes)+15)/16) // aligned for every type
	raw := nd.AsBytes(buf)
	if at%in.Size() != 0 {
		return "ran", nil // the input would be misaligned
	}
	src := ndconv.Array{Shape: slices.Clone(c.input.Shape), Data: nd.ViewBytes(in, raw[at:at+inBytes])}
	copy(src.Bytes(), c.input.Bytes())
	dst := ndconv.Array{Shape: p.Shape(), Data: nd.ViewBytes(out, raw[to:to+outBytes])}
	if src.Len() != c.input.Len() || dst.Len() != want.Len() {
		return "ran", nil // an empty array: no bytes to share
	}
	got, err := p.Execute(ctx, dst, src)
	if err != nil {
		return "error", fmt.Errorf("Execute overlapping: %w", err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		return "wrong", errors.New("overlapping output: other bits than out of place")
	}
	return "overlapping", nil
}

func clone(a ndconv.Array) ndconv.Array {
	b, _ := nd.New(a.DType(), a.Shape...)
	copy(b.Bytes(), a.Bytes())
	return b
}

// checkFFT compares an FFT result with the reference within cpu.FFTBound
// (summed over a complex problem's real parts) and the output's rounding.
func checkFFT(tc enginetest.Case, p *nd.Problem, got ndconv.Array) (string, error) {
	maxAbs := tc.MaxAbs() + math.Abs(tc.Spec.CValImag)
	parts := []*nd.Problem{p}
	if p.Complex() {
		rp := p.RealParts()
		parts = []*nd.Problem{rp.Re, rp.Im}
		maxAbs += maxAbsComplex(tc.Input)
	}
	bound := 0.0
	for _, part := range parts {
		if part == nil {
			continue
		}
		b, err := cpu.FFTBound(part, cpu.Options{}, maxAbs)
		if err != nil {
			return "", err
		}
		bound += b
	}
	if !p.Complex() {
		return tc.CheckBound(got, tc.Want(), bound), nil
	}
	re, im := tc.WantComplex()
	gr, gi := got.Parts()
	for i, pair := range [][2][]float64{{gr.Float64s(), re.Values}, {gi.Float64s(), im.Values}} {
		for j, g := range pair[0] {
			w := pair[1][j]
			if tol := bound + 0x1p-23*math.Abs(w); math.Abs(g-w) > tol {
				return fmt.Sprintf("part %d element %d: %v, want %v (±%g)", i, j, g, w, tol), nil
			}
		}
	}
	return "", nil
}
