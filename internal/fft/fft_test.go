package fft

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

const eps = 0x1p-24

// naiveDFT is the definition, in float64: X[k] = Σ_t x[t]·exp(∓2πi·kt/n).
func naiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range n {
		var s complex128
		for t, v := range x {
			c, sn := unitRoot(k*t%n, n)
			if !inverse {
				sn = -sn
			}
			s += v * complex(c, sn)
		}
		out[k] = s
	}
	return out
}

// passCost is the error growth factor of a length-n transform, in units
// of ε relative to the 2-norm: about one unit per radix-2/4 level and
// one per pass of a small odd radix, a larger odd radix adding up its √R
// terms' roundoff.
func passCost(n int) float64 {
	c := 1.0
	for _, r := range factorize(n) {
		switch {
		case r <= 7:
			c += math.Log2(float64(r))
		default:
			c += math.Sqrt(float64(r)) + math.Log2(float64(r))
		}
	}
	return c
}

// Bound: every transform of length n must satisfy (measured: at most a
// third of it on random data)
// ‖X̂ − X‖₂ ≤ errorConstant·ε·passCost(n)·‖X‖₂.
const errorConstant = 1

func relErr2(got []complex64, want []complex128) float64 {
	var num, den float64
	for i, w := range want {
		d := complex128(got[i]) - w
		num += real(d)*real(d) + imag(d)*imag(d)
		den += real(w)*real(w) + imag(w)*imag(w)
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

func randomComplex(rng *rand.Rand, n int) ([]complex64, []complex128) {
	x32, x64 := make([]complex64, n), make([]complex128, n)
	for i := range x32 {
		x32[i] = complex(float32(rng.Float64()*2-1), float32(rng.Float64()*2-1))
		x64[i] = complex128(x32[i])
	}
	return x32, x64
}

func checkComplex(t *testing.T, n int, want func(x []complex128, inverse bool) []complex128) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	plan := NewFFT(n)
	for _, inverse := range []bool{false, true} {
		x32, x64 := randomComplex(rng, n)
		var got []complex64
		if inverse {
			got = plan.Inverse(nil, x32)
		} else {
			got = plan.Forward(nil, x32)
		}
		if e, bound := relErr2(got, want(x64, inverse)), errorConstant*eps*passCost(n); e > bound {
			t.Errorf("n=%d inverse=%v: relative error %.3g > bound %.3g", n, inverse, e, bound)
		}
	}
}

func TestComplexAgainstDFT(t *testing.T) {
	for n := 1; n <= 200; n++ {
		checkComplex(t, n, naiveDFT)
	}
	for _, n := range []int{1009, 1024, 2 * 3 * 5 * 7 * 4} {
		checkComplex(t, n, naiveDFT)
	}
}

// gonumComplex is gonum's complex128 FFT, the oracle for long lengths.
func gonumComplex(x []complex128, inverse bool) []complex128 {
	f := fourier.NewCmplxFFT(len(x))
	if inverse {
		return f.Sequence(nil, x)
	}
	return f.Coefficients(nil, x)
}

func TestComplexAgainstGonum(t *testing.T) {
	for _, n := range []int{4096, 3 * 3 * 5 * 5 * 7 * 7 * 4, 1 << 16, 2 * 3 * 5 * 7 * 11 * 13, 49152} {
		checkComplex(t, n, gonumComplex)
	}
}

func TestRealAgainstGonum(t *testing.T) {
	lengths := []int{}
	for n := 1; n <= 200; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1009, 4096, 6000, 1<<16, 2*3*5*7*9*16)
	for _, n := range lengths {
		rng := rand.New(rand.NewPCG(uint64(n), 4))
		x32, x64 := make([]float32, n), make([]float64, n)
		for i := range x32 {
			x32[i] = float32(rng.Float64()*2 - 1)
			x64[i] = float64(x32[i])
		}
		plan := NewRealFFT(n)
		g := fourier.NewFFT(n)
		want := g.Coefficients(nil, x64)
		got := plan.Forward(nil, x32)
		bound := errorConstant * eps * passCost(n)
		if e := relErr2(got, want); e > bound {
			t.Errorf("n=%d forward: relative error %.3g > bound %.3g", n, e, bound)
		}
		// Back: n·x, compared as complex sequences with zero imaginary part.
		back := plan.Inverse(nil, got)
		wantBack := g.Sequence(nil, want)
		b32, b64 := make([]complex64, n), make([]complex128, n)
		for i := range back {
			b32[i], b64[i] = complex(back[i], 0), complex(wantBack[i], 0)
		}
		if e := relErr2(b32, b64); e > 2*bound {
			t.Errorf("n=%d round trip: relative error %.3g > bound %.3g", n, e, 2*bound)
		}
	}
}

// TestRealND checks N-D transforms against successive 1-D float64
// transforms along each axis, batched, on several worker counts.
func TestRealND(t *testing.T) {
	for _, tc := range []struct {
		batch   int
		shape   []int
		workers int
	}{
		{1, []int{8}, 1}, {3, []int{6}, 2}, {40, []int{10}, 2}, {1, []int{5, 6}, 1}, {2, []int{7, 12}, 3},
		{1, []int{3, 4, 10}, 2}, {2, []int{9, 5, 14}, 2}, {1, []int{64, 70}, 2}, {1, []int{2, 1, 1, 4}, 1},
	} {
		rng := rand.New(rand.NewPCG(uint64(len(tc.shape)), uint64(tc.batch)))
		plan := NewRealND(tc.batch, tc.shape, tc.workers)
		src := make([]float32, plan.Len())
		for i := range src {
			src[i] = float32(rng.Float64()*2 - 1)
		}
		spec := make([]complex64, plan.SpectrumLen())
		plan.Forward(spec, src)
		want := naiveRealND(tc.batch, tc.shape, src)
		total := 0.0
		for _, n := range tc.shape {
			total += passCost(n)
		}
		bound := errorConstant * eps * total
		if e := relErr2(spec, want); e > bound {
			t.Errorf("%d×%v forward: relative error %.3g > %.3g", tc.batch, tc.shape, e, bound)
		}
		back := make([]float32, plan.Len())
		plan.Inverse(back, spec)
		scale := 1
		for _, n := range tc.shape {
			scale *= n
		}
		worst := 0.0
		for i, v := range back {
			worst = max(worst, math.Abs(float64(v)/float64(scale)-float64(src[i])))
		}
		if worst > 4*bound {
			t.Errorf("%d×%v round trip: error %.3g > %.3g", tc.batch, tc.shape, worst, 4*bound)
		}
	}
}

// naiveRealND is the N-D spectrum by float64 DFTs along each axis, the
// last axis cut to its n/2+1 non-redundant coefficients.
func naiveRealND(batch int, shape []int, src []float32) []complex128 {
	rank := len(shape)
	size := 1
	for _, n := range shape {
		size *= n
	}
	x := make([]complex128, len(src))
	for i, v := range src {
		x[i] = complex(float64(v), 0)
	}
	inner := 1
	for d := rank - 1; d >= 0; d-- {
		n := shape[d]
		for o := 0; o < len(x)/(n*inner); o++ {
			for c := range inner {
				line := make([]complex128, n)
				for i := range n {
					line[i] = x[(o*n+i)*inner+c]
				}
				for i, v := range naiveDFT(line, false) {
					x[(o*n+i)*inner+c] = v
				}
			}
		}
		inner *= n
	}
	last, h1 := shape[rank-1], shape[rank-1]/2+1
	var out []complex128
	for l := 0; l < len(x)/last; l++ {
		out = append(out, x[l*last:l*last+h1]...)
	}
	return out
}

func TestNextFast(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 11: 12, 13: 14, 1009: 1024, 2078: 2100, 127: 128} {
		if got := NextFast(n); got != want {
			t.Errorf("NextFast(%d) = %d, want %d", n, got, want)
		}
	}
	if got := NextFastEven(15); got != 16 {
		t.Errorf("NextFastEven(15) = %d", got)
	}
}
