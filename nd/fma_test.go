package nd

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Big is FMA32's reference: a·b + c in exact arithmetic, rounded once
// to float32 by math/big (which rounds to nearest even, subnormals and
// overflow included).
func fma32Big(a, b, c float32) float32 {
	if isSpecial(a) || isSpecial(b) || isSpecial(c) {
		return float32(float64(a)*float64(b) + float64(c)) // IEEE: NaN/Inf rules
	}
	x := new(big.Float).SetPrec(0).SetFloat64(float64(a))
	y := new(big.Float).SetPrec(0).SetFloat64(float64(b))
	z := new(big.Float).SetPrec(0).SetFloat64(float64(c))
	prod := new(big.Float).SetPrec(2000).Mul(x, y)
	sum := new(big.Float).SetPrec(2000).Add(prod, z)
	if sum.Sign() == 0 {
		// Exact zero: IEEE gives +0 unless both addends are −0 (or the
		// product is −0 and c is −0).
		return float32(float64(a)*float64(b) + float64(c))
	}
	f, _ := sum.Float32()
	return f
}

func isSpecial(f float32) bool {
	return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0)
}

func sameFloat32(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
}

func checkFMA32(t *testing.T, a, b, c float32) {
	t.Helper()
	got, want := FMA32(a, b, c), fma32Big(a, b, c)
	if !sameFloat32(got, want) {
		t.Fatalf("FMA32(%x, %x, %x) = %x (%g), want %x (%g)",
			math.Float32bits(a), math.Float32bits(b), math.Float32bits(c),
			math.Float32bits(got), got, math.Float32bits(want), want)
	}
	if fast, ok := FMA32Fast(a, b, c); ok && !sameFloat32(fast, want) {
		t.Fatalf("FMA32Fast(%x, %x, %x) = %x, want %x", math.Float32bits(a), math.Float32bits(b), math.Float32bits(c), math.Float32bits(fast), math.Float32bits(want))
	}
}

// TestFMA32Random compares with math/big on random bit patterns (every
// exponent, subnormals, NaN and Inf) and on values of similar magnitude.
func TestFMA32Random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 300000
	if testing.Short() {
		n = 30000
	}
	for range n {
		a := math.Float32frombits(r.Uint32())
		b := math.Float32frombits(r.Uint32())
		c := math.Float32frombits(r.Uint32())
		checkFMA32(t, a, b, c)
		// Similar magnitudes, where cancellation happens.
		a, b, c = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
		checkFMA32(t, a, b, c)
	}
}

// TestFMA32Adversarial builds triples whose float64 sum lands exactly on a
// float32 midpoint while the exact sum lies just beside it (the
// double-rounding trap), across the exponent range: c is a float32 and the
// product is ±2^(E−24)·(1 − i²·2⁻⁴⁶), half an ulp of c less a remainder
// that float64 rounding drops.
func TestFMA32Adversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	trapped := 0
	for range 200000 {
		exp := r.IntN(278) - 150 // c's exponent E
		c := float32(math.Ldexp(float64(r.Uint32()&0x007fffff|0x00800000), exp-23))
		i := float64(r.IntN(361) + 1)
		ea := (exp - 24) / 2
		a := float32(math.Ldexp(1+i*0x1p-23, ea))
		b := float32(math.Ldexp(1-i*0x1p-23, exp-24-ea))
		if r.IntN(2) == 0 {
			a = -a
		}
		if r.IntN(2) == 0 {
			a, c = -a, -c
		}
		p := float64(a) * float64(b)
		s := p + float64(c)
		exact := new(big.Float).SetPrec(2000).Add(new(big.Float).SetFloat64(p), new(big.Float).SetFloat64(float64(c)))
		if math.Float64bits(s)&(1<<29-1) == 1<<28 && exact.Cmp(new(big.Float).SetFloat64(s)) != 0 {
			trapped++
		}
		checkFMA32(t, a, b, c)
	}
	if trapped < 10000 {
		t.Fatalf("only %d of the adversarial triples hit a float32 midpoint inexactly", trapped)
	}
	// Fixed cases: exact midpoints with a tiny product pushing either way,
	// subnormal results, the overflow threshold, signed zeros.
	for _, tc := range [][3]float32{
		{1, 1, 0},
		{0x1p-149, 0.5, 0},
		{0x1p-149, 0.75, 0},
		{0x1p-149, 0.25, 0x1p-149},
		{3, 0x1p-150, 0x1p-126},
		{-1, 0, 0},
		{-1, 0, float32(math.Copysign(0, -1))},
		{math.MaxFloat32, 1, math.MaxFloat32 * 0x1p-24},
		{math.MaxFloat32, 1 + 0x1p-23, 0},
		{1 + 0x1p-23, 1 + 0x1p-23, 0x1p-46},
		{1 + 0x1p-23, 1 - 0x1p-24, -1},
		{float32(math.Inf(1)), 0, 1},
		{float32(math.NaN()), 1, 1},
	} {
		checkFMA32(t, tc[0], tc[1], tc[2])
	}
}

// TestFMAGeneric: the generic FMA is FMA32 for float32 and math.FMA for
// float64.
func TestFMAGeneric(t *testing.T) {
	if got := FMA[float32](1+0x1p-23, 1+0x1p-23, -1); got != FMA32(1+0x1p-23, 1+0x1p-23, -1) || got != 0x1p-22+0x1p-46 {
		t.Errorf("FMA[float32] = %g", got)
	}
	if got := FMA[float64](1+0x1p-52, 1+0x1p-52, -1); got != math.FMA(1+0x1p-52, 1+0x1p-52, -1) {
		t.Errorf("FMA[float64] = %g", got)
	}
}

func BenchmarkFMA32(b *testing.B) {
	w := float32(0.37)
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(i) * 0.001
	}
	var acc float32
	for b.Loop() {
		for _, x := range xs {
			acc = FMA32(w, x, acc)
		}
	}
	_ = acc
}
