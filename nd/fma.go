package nd

import (
	"math"
	"unsafe"
)

// FMA returns a·b + c computed exactly and rounded once to F (round to
// nearest, ties to even): the accumulation step of every engine. Every
// engine adds each nonzero tap as acc = FMA(w, x, acc), in the kernel's
// row-major order, so that all of them give the same bits (GPU fma, CPU
// VFMADD, and this function in the pure-Go loops).
func FMA[F Float](a, b, c F) F {
	if unsafe.Sizeof(a) == 4 {
		return F(FMA32(float32(a), float32(b), float32(c)))
	}
	return F(math.FMA(float64(a), float64(b), float64(c)))
}

// FMA32 is the correctly rounded float32 fused multiply-add, a·b + c with
// a single rounding, in pure Go.
//
// The product of two float32 values is exact in float64 (48 significant
// bits of 53, exponents well inside float64's range), so only the sum can
// be inexact. Rounding the float64 sum s to float32 then gives the correct
// result unless s fell exactly on a float32 rounding boundary (a midpoint
// between two float32 values) while the float64 addition discarded
// something: float64 rounding is monotone and every float32 midpoint is a
// float64 value, so an inexact sum can land on a midpoint but never cross
// one. In that rare case, and wherever float32 results are subnormal (their
// midpoints sit elsewhere in the bits), the sum is rounded to odd (its last
// bit set when inexact), which float32 rounding then resolves correctly
// (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", 2008).
//
// The common case, FMA32Fast, is small enough for the compiler to inline
// into a loop; FMA32 itself is not.
func FMA32(a, b, c float32) float32 {
	if r, ok := FMA32Fast(a, b, c); ok {
		return r
	}
	return fma32Careful(a, b, c)
}

// FMA32Fast is FMA32's common case: it returns FMA32(a, b, c) and true,
// or false where the float64 sum sits on a float32 rounding boundary or
// below float32's normal range, and only FMA32 gives the correct rounding.
// A loop calls it inline and FMA32 out of line on false.
func FMA32Fast(a, b, c float32) (float32, bool) {
	s := float64(a)*float64(b) + float64(c)
	// The low 29 of float64's 52 fraction bits are what float32 rounds
	// away; exactly 1000…0 is a midpoint. Results below float32's normal
	// range round away more bits and take the careful path too.
	if math.Float64bits(s)&(1<<29-1) == 1<<28 || math.Abs(s) < 0x1p-126 {
		return 0, false
	}
	return float32(s), true
}

// fma32Careful is FMA32 where the float64 sum may sit on a float32
// rounding boundary.
//
//go:noinline
func fma32Careful(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	return float32(roundToOdd(p, float64(c), p+float64(c)))
}

// roundToOdd returns s = p + c (as rounded to float64) with its last bit
// set when the addition was inexact, moved toward the exact sum: the
// float64 value closest to p + c whose rounding to any narrower format is
// that format's correct rounding of p + c.
func roundToOdd(p, c, s float64) float64 {
	// TwoSum (Knuth): err is exactly (p + c) − s, for finite values.
	v := s - p
	err := (p - (s - v)) + (c - v)
	bits := math.Float64bits(s)
	if err == 0 || err != err || bits&1 == 1 {
		return s
	}
	// s is even and inexact: its odd neighbour on the exact sum's side.
	if (err > 0) == (s > 0) {
		return math.Float64frombits(bits + 1) // away from zero
	}
	return math.Float64frombits(bits - 1) // toward zero
}
