package simd

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv/nd"
)

// trapFactor returns x such that fma(w, x, c) is a double-rounding trap
// for the float32 c (nonzero, normal, of exponent E) and the weight
// w = 1 + i·2⁻²³: w·x = ±2^(E−24)·(1 − i²·2⁻⁴⁶), the sign of c, so the
// exact sum lies just inside c's half-ulp and the float64 sum rounds onto
// the float32 midpoint beside c (nd's TestFMA32Adversarial triples).
// Where c is odd the midpoint rounds to even away from c, which is wrong.
func trapFactor(c float32, i float64) float32 {
	_, e := math.Frexp(float64(c)) // c = f·2^e, f in [0.5, 1): E = e−1
	x := float32(math.Ldexp(1-i*0x1p-23, e-1-24))
	if c < 0 {
		x = -x
	}
	return x
}

// trapProblem builds n outputs of taps taps whose source values are each
// read by one output and one tap (tap t reads src[t·pitch + x]), so that
// every source value can be chosen for the accumulator it meets: a
// fraction trapRate of the fused multiply-adds after the first are
// double-rounding traps (trapFactor against the accumulator the reference
// chain has reached), the rest random. It returns the source, the offsets,
// the weights (a trap tap's weight is 1 + i·2⁻²³) and the number of traps
// where float32 of the float64 sum is wrong.
func trapProblem(rng *rand.Rand, n, taps int, trapRate float64) (src []float32, offs []int, w []float32, wrong int) {
	pitch := n + rng.IntN(3)
	src = make([]float32, (taps-1)*pitch+n)
	offs = make([]int, taps)
	w = make([]float32, taps)
	acc := make([]float32, n) // the reference chain, from +0
	for t := range taps {
		offs[t] = t * pitch
		i := float64(rng.IntN(361) + 1)
		trapTap := t > 0 && rng.Float64() < trapRate*4
		if trapTap {
			w[t] = float32(1 + i*0x1p-23)
		} else {
			w[t] = float32(rng.NormFloat64())
		}
		for x := range n {
			v := float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(20)-10))
			c := acc[x]
			if trapTap && rng.IntN(4) == 0 && c != 0 && math.Abs(float64(c)) >= 0x1p-100 && math.Abs(float64(c)) < 0x1p100 {
				v = trapFactor(c, i)
			}
			src[offs[t]+x] = v
			r := nd.FMA32(w[t], v, c)
			if float32(float64(w[t])*float64(v)+float64(c)) != r {
				wrong++
			}
			acc[x] = r
		}
	}
	return src, offs, w, wrong
}

// TestMidpoints runs the float32 twin (SetTaps, Block) on outputs whose
// chains meet double-rounding traps at random taps and lanes, and compares
// every output with nd.FMA32 applied in order (setTapsGo), bit for bit.
// The traps make float32 of the float64 sum wrong (counted), so the test
// fails if the group loop's midpoint test (mid8 in group32Mid) is left out
// or misses a lane.
func TestMidpoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 7))
	wrong, flagged, fmas := 0, 0, 0
	for c := range twinCases(2000) {
		n := twinWidth * (1 + rng.IntN(4))
		taps := 2 + rng.IntN(14)
		src, offs, w, trapped := trapProblem(rng, n, taps, 0.05)
		wrong += trapped
		want := make([]float32, n)
		setTapsGo(want, src, offs, w)
		acc := make([]float32, n)
		setTapsTwinF32(acc, src, offs, w)
		out := make([]float32, 2*n)
		blockTwin32(out, n, n, src, [][]int{offs, offs[:1]}, [][]float32{w, w[:1]})
		for x := range acc {
			if !same(acc[x], want[x]) || !same(out[x], want[x]) {
				t.Fatalf("case %d (%d taps), output %d: SetTaps %v, Block %v, want %v", c, taps, x, acc[x], out[x], want[x])
			}
		}
		for x := 0; x+twinWidth <= n; x += twinWidth {
			var a [twinWidth]float64
			if !groupNormal(&a, unsafe.Pointer(&src[x]), offs, w) {
				flagged++
			}
		}
		fmas += n * taps
	}
	t.Logf("%d fused multiply-adds, %d double-rounding traps where float32 of the float64 sum is wrong, %d groups flagged", fmas, wrong, flagged)
	if wrong < twinCases(2000)/4 || flagged < wrong/8 {
		t.Fatalf("only %d wrong traps and %d flagged groups", wrong, flagged)
	}
}

// TestMid8 tests put8 and mid8 lane by lane: each of the eight sums set to
// a float32 midpoint (its low 29 bits 1000…0) alone is flagged, the same
// sum with any one of those 29 bits changed is not, and neither are the
// other lanes' random sums, on this machine's byte order.
func TestMid8(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 8))
	var ring [5]uint64
	r := unsafe.Pointer(&ring)
	for range 2000 {
		var s [8]float64
		for i := range s {
			s[i] = math.Float64frombits(rng.Uint64()&^(1<<28) | 1) // never a midpoint
		}
		put8(r, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
		if mid8(r)&midFlags != 0 {
			t.Fatalf("%v flagged without a midpoint", s)
		}
		lane := rng.IntN(8)
		b := math.Float64bits(s[lane])&^(1<<29-1) | 1<<28
		for bit := -1; bit < 29; bit++ {
			v := s
			v[lane] = math.Float64frombits(b)
			if bit >= 0 {
				v[lane] = math.Float64frombits(b ^ 1<<bit)
			}
			put8(r, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
			if got := mid8(r)&midFlags != 0; got != (bit < 0) {
				t.Fatalf("lane %d bits %#x (low 29 %#x): flagged %v", lane, math.Float64bits(v[lane]), math.Float64bits(v[lane])&(1<<29-1), got)
			}
		}
	}
}

// TestTwinProperty compares the float32 twin's fused multiply-adds with
// the exact emulation (nd.FMA32, through tapsGo and setsGo) bit for bit on
// random problems: values of random bits (every exponent, subnormals,
// infinities and NaNs among them), normal ones of mixed scales, small
// integers (exact sums, as from uint8 images) and trap chains (trapProblem),
// through Taps, SetTaps and Block (blockTwin32, BankSets sets).
// NDCONV_TWIN_CASES sets the number of problems (a few thousand
// multiply-adds each).
func TestTwinProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 9))
	fmas := 0
	kinds := []func() float32{
		func() float32 { return math.Float32frombits(rng.Uint32()) },
		func() float32 { return float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(60)-30)) },
		func() float32 { return float32(rng.IntN(256)) },
		func() float32 { return float32(rng.IntN(3) - 1) },
	}
	for c := range twinCases(1000) {
		n := 1 + rng.IntN(80)
		taps := 1 + rng.IntN(24)
		kx, kw := kinds[rng.IntN(len(kinds))], kinds[rng.IntN(len(kinds))]
		span := rng.IntN(3 * taps)
		src := make([]float32, span+n)
		for i := range src {
			src[i] = kx()
		}
		offs := make([]int, taps)
		w := make([]float32, taps)
		for i := range offs {
			offs[i], w[i] = rng.IntN(span+1), kw()
		}
		if rng.IntN(4) == 0 {
			src, offs, w, _ = trapProblem(rng, n, taps, 0.2)
		}
		init := make([]float32, n)
		for i := range init {
			init[i] = kx()
		}
		check := func(what string, got, want []float32) {
			t.Helper()
			for x := range got {
				if !same(got[x], want[x]) {
					t.Fatalf("case %d, %s, %d outputs of %d taps, output %d: %v, want %v", c, what, n, taps, x, got[x], want[x])
				}
			}
		}
		want := append([]float32(nil), init...)
		tapsGo(want, src, offs, w)
		got := append([]float32(nil), init...)
		tapsTwinF32(got, src, offs, w)
		check("Taps", got, want)
		setTapsGo(want, src, offs, w)
		setTapsTwinF32(got, src, offs, w)
		check("SetTaps", got, want)
		fmas += 2 * n * taps

		// A Block of BankSets sets over the same source.
		steps := make([]int, taps)
		bw := make([]float32, BankSets*taps)
		for s := range steps {
			steps[s] = offs[s]<<8 | rng.IntN(1<<BankSets)
			for i := range BankSets {
				bw[s*BankSets+i] = kw()
			}
			fmas += n * bitCount(steps[s]&0xff)
		}
		st := NewSteps(BankSets, steps, bw)
		out, ref := make([]float32, BankSets*n), make([]float32, BankSets*n)
		setsGo(BankSets, ref, n, n, src, steps, bw)
		blockTwin32(out, n, n, src, st.offs, f32s2(st.setW))
		check("Block", out, ref)
	}
	t.Logf("%d fused multiply-adds", fmas)
}

func bitCount(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}
