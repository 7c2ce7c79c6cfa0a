package nd

import "math"

// Float32 returns h's value; every binary16 value, NaN payloads included,
// is a float32 exactly.
func (h Half) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case 0: // zero or subnormal: frac·2⁻²⁴
		f := float32(frac) * 0x1p-24
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// HalfOf returns v rounded once, to nearest with ties to even, to
// binary16, as numpy's float64 → float16 cast does: beyond ±65504 (from
// ±65520, the midpoint to 2¹⁶, on) it is ±Inf, NaN is a quiet NaN.
func HalfOf(v float64) Half {
	sign := Half(math.Float64bits(v)>>48) & 0x8000
	a := math.Abs(v)
	switch {
	case a != a:
		return sign | 0x7e00
	case a >= 65520:
		return sign | 0x7c00
	case a < 0x1p-14:
		// Zero or subnormal, m·2⁻²⁴; m = 1024 is the smallest normal,
		// which the same encoding gives.
		return sign | Half(math.RoundToEven(a*0x1p24))
	}
	frac, exp := math.Frexp(a) // a = frac·2^exp, frac in [0.5, 1)
	m := math.RoundToEven((2*frac - 1) * 1024)
	// Adding, not or-ing: a mantissa rounded up to 1024 carries into the
	// exponent, which is the right value.
	return sign | (Half(exp-1+15)<<10 + Half(m))
}
