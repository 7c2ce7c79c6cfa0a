package simd

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// twinCases is the number of groups of outputs TestTwinAdversarial runs:
// NDCONV_TWIN_CASES overrides the default, a tenth of it under -short
// (each group is 27 outputs of two taps).
func twinCases(def int) int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_TWIN_CASES")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// TestTwinAdversarial runs the float32 twin on outputs whose second fused
// multiply-add is a double-rounding trap (the float64 sum lands exactly on
// a float32 midpoint while the exact sum lies beside it, nd's
// TestFMA32Adversarial triples), on subnormal, overflowing, zero and
// non-finite ones, mixed in a group with ordinary outputs so that the
// twin's redo of a group is exercised too, and compares every output with
// nd.FMA32 applied in order, bit for bit.
func TestTwinAdversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 3))
	groups := twinCases(20000)
	trapped, redone := 0, 0
	specials := []float32{0, float32(math.Copysign(0, -1)), 0x1p-149, -0x1p-149, 0x1p-126, 3 * 0x1p-150, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, 1 + 0x1p-23, 1 - 0x1p-24}
	const n = 3*twinWidth + 3 // whole groups and a tail
	acc := make([]float32, n)
	src := make([]float32, 2*n+1)
	for range groups {
		// One trap per group: c's exponent E, the weight a and the
		// product a·b = ±2^(E−24)·(1 − i²·2⁻⁴⁶).
		exp := r.IntN(278) - 150
		i := float64(r.IntN(361) + 1)
		ea := (exp - 24) / 2
		a := float32(math.Ldexp(1+i*0x1p-23, ea))
		b := float32(math.Ldexp(1-i*0x1p-23, exp-24-ea))
		// A quarter of the groups are traps below float32's normal range:
		// c an odd multiple of 2⁻¹⁴⁹ and a·b = 2⁻¹⁵⁰·(1 − i²·2⁻⁴⁶), so the
		// float64 sum lands on a midpoint of the subnormal grid.
		subnormal := r.IntN(4) == 0
		if subnormal {
			a = float32(math.Ldexp(1+i*0x1p-23, -70))
			b = float32(math.Ldexp(1-i*0x1p-23, -80))
		}
		if r.IntN(2) == 0 {
			a = -a
		}
		w := []float32{1, a}
		offs := []int{0, n + 1} // src[x] then src[n+1+x]
		for x := range n {
			c := float32(math.Ldexp(float64(r.Uint32()&0x007fffff|0x00800000), exp-23))
			if r.IntN(2) == 0 {
				c = -c
			}
			if subnormal {
				c = float32(math.Ldexp(float64(r.IntN(1<<22)|1<<18|1), -149))
				if a < 0 {
					c = -c
				}
			}
			bx := b
			switch k := r.IntN(8); {
			case k == 0:
				c = specials[r.IntN(len(specials))]
			case k == 1:
				bx = specials[r.IntN(len(specials))]
			case k == 2:
				c, bx = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			src[x], src[n+1+x] = c, bx
			p := float64(a) * float64(bx)
			// A trap: rounding the float64 sum to float32 is wrong.
			if f := float32(p + float64(c)); !same(f, nd.FMA32(a, bx, c)) {
				trapped++
			}
		}
		want := make([]float32, n)
		for x := range want {
			want[x] = nd.FMA32(a, src[n+1+x], nd.FMA32(1, src[x], 0))
		}
		for _, run := range []struct {
			name string
			fn   func(acc, src []float32, offs []int, w []float32)
		}{
			{"twin SetTaps", setTapsTwinF32},
			{"twin Taps", func(acc, src []float32, offs []int, w []float32) { clear(acc); tapsTwinF32(acc, src, offs, w) }},
			{"SetTaps in use (" + ISA() + ")", SetTaps[float32]},
		} {
			run.fn(acc, src, offs, w)
			for x := range acc {
				if !same(acc[x], want[x]) {
					t.Fatalf("%s, output %d: fma(%v, %v, fma(1, %v, 0)) = %v, want %v", run.name, x, a, src[n+1+x], src[x], acc[x], want[x])
				}
			}
		}
		for g := 0; g+twinWidth <= n; g += twinWidth {
			var lanes [twinWidth]float64
			for x := range lanes {
				lanes[x] = float64(src[g+x])
			}
			if !group32(&lanes, unsafePointer(src[n+1+g:]), []int{0}, []float32{a}) {
				redone++
			}
		}
	}
	t.Logf("%d groups of %d outputs: %d double-rounding traps (float32 of the float64 sum wrong), %d groups redone", groups, n, trapped, redone)
	if trapped < groups/2 || redone < groups/2 {
		t.Fatalf("only %d traps and %d redone groups in %d groups", trapped, redone, groups)
	}
}

// TestNormalProductsBound tests normalProducts' argument where it is
// tightest: products from 2⁻¹²⁹ up, added to accumulators that nearly
// cancel them or are themselves below 2⁻¹²⁶, so that many sums are
// subnormal; the twin leaves out the test for those sums there, and must
// still give nd.FMA32's bits.
func TestNormalProductsBound(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 4))
	const n = twinWidth
	acc, src, want := make([]float32, n), make([]float32, n), make([]float32, n)
	subnormal := 0
	for range twinCases(40000) {
		// Weight and inputs with products in [2⁻¹²⁹, 2⁻¹¹⁰).
		ew := -60 - r.IntN(40)
		w := float32(math.Ldexp(1+r.Float64(), ew))
		for x := range src {
			src[x] = float32(math.Ldexp(1+r.Float64(), -129-ew+r.IntN(19)))
			if r.IntN(2) == 0 {
				src[x] = -src[x]
			}
			p := float64(w) * float64(src[x])
			switch r.IntN(3) {
			case 0: // nearly cancelling
				acc[x] = float32(-p * (1 + math.Ldexp(r.Float64(), -10-r.IntN(14))))
			case 1: // a subnormal accumulator
				acc[x] = float32(math.Ldexp(r.Float64()*2-1, -126))
			default:
				acc[x] = float32(math.Ldexp(r.Float64()*2-1, -130+r.IntN(30)))
			}
			want[x] = nd.FMA32(w, src[x], acc[x])
			if math.Abs(float64(want[x])) < 0x1p-126 && want[x] != 0 {
				subnormal++
			}
		}
		if !normalProducts(src, n, []int{0}, []float32{w}) {
			t.Fatalf("products of %v and %v: normalProducts false", w, src)
		}
		tapsTwinF32(acc, src, []int{0}, []float32{w})
		for x := range acc {
			if !same(acc[x], want[x]) {
				t.Fatalf("fma(%v, %v, …) = %v, want %v", w, src[x], acc[x], want[x])
			}
		}
	}
	if subnormal == 0 {
		t.Fatal("no subnormal results")
	}
	t.Logf("%d subnormal results", subnormal)
}
