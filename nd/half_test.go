package nd

import (
	"math"
	"testing"
)

// TestHalf: every binary16 value survives Float32 and HalfOf; each midpoint
// between neighbours rounds to the one with an even mantissa, and a hair
// either side to the nearer; overflow and NaN follow numpy.
func TestHalf(t *testing.T) {
	for b := range 1 << 16 {
		h := Half(b)
		f := h.Float32()
		if f != f {
			if g := HalfOf(float64(f)); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", b, g)
			}
			continue
		}
		if g := HalfOf(float64(f)); g != h && !(f == 0 && g&0x7fff == 0 && g == h) {
			t.Fatalf("%#04x (%v) came back as %#04x", b, f, g)
		}
	}
	// Midpoints between positive finite neighbours h, h+1 (their bit
	// patterns are consecutive).
	for b := range 0x7bff {
		lo, hi := float64(Half(b).Float32()), float64(Half(b+1).Float32())
		mid := (lo + hi) / 2
		even := Half(b)
		if b%2 == 1 {
			even = Half(b + 1)
		}
		if g := HalfOf(mid); g != even {
			t.Fatalf("midpoint %v of %#04x, %#04x gave %#04x", mid, b, b+1, g)
		}
		if g := HalfOf(-mid); g != even|0x8000 {
			t.Fatalf("midpoint %v gave %#04x", -mid, g)
		}
		if g := HalfOf(math.Nextafter(mid, 0)); g != Half(b) {
			t.Fatalf("just below %v gave %#04x", mid, g)
		}
		if g := HalfOf(math.Nextafter(mid, 1e9)); g != Half(b+1) {
			t.Fatalf("just above %v gave %#04x", mid, g)
		}
	}
	for v, want := range map[float64]Half{65504: 0x7bff, 65519.99: 0x7bff, 65520: 0x7c00, 1e300: 0x7c00, -1e300: 0xfc00,
		math.Inf(1): 0x7c00, 0x1p-25: 0, 0x1p-25 * 1.0000001: 1, 0x1p-24: 1, math.Copysign(0, -1): 0x8000} {
		if g := HalfOf(v); g != want {
			t.Errorf("HalfOf(%v) = %#04x, want %#04x", v, g, want)
		}
	}
}

// TestWideIntegers: 64-bit and 32-bit integers round and saturate with no
// overflow at the float64 bounds 2⁶³ and 2⁶⁴.
func TestWideIntegers(t *testing.T) {
	cases := []struct {
		dt   DType
		v    float64
		want any
	}{
		{Int64, 1 << 63, int64(math.MaxInt64)},
		{Int64, 1e30, int64(math.MaxInt64)},
		{Int64, -1 << 63, int64(math.MinInt64)},
		{Int64, -1e30, int64(math.MinInt64)},
		{Int64, 1<<63 - 1024, int64(1<<63 - 1024)},
		{Int64, 2.5, int64(2)},
		{Uint64, 1 << 64, uint64(math.MaxUint64)},
		{Uint64, 1<<64 - 2048, uint64(1<<64 - 2048)},
		{Uint64, -3, uint64(0)},
		{Uint64, math.NaN(), uint64(0)},
		{Uint32, 4294967295.4, uint32(math.MaxUint32)},
		{Uint32, 4294967296, uint32(math.MaxUint32)},
		{Uint32, 3.5, uint32(4)},
		{Int8, -128.6, int8(-128)},
		{Int8, 126.5, int8(126)},
		{Int8, 200, int8(127)},
	}
	for _, c := range cases {
		a, _ := New(c.dt, 1)
		Store(a.Data, 0, 1, []float64{c.v})
		var got any
		switch d := a.Data.(type) {
		case []int64:
			got = d[0]
		case []uint64:
			got = d[0]
		case []uint32:
			got = d[0]
		case []int8:
			got = d[0]
		}
		if got != c.want {
			t.Errorf("Store(%v) into %v = %v, want %v", c.v, c.dt, got, c.want)
		}
	}
	for _, s := range []struct {
		name string
		dt   DType
	}{{"u8", Uint64}, {"i8", Int64}, {"i1", Int8}, {"u4", Uint32}, {"f2", Float16}, {"half", Float16}, {"int8", Int8}} {
		if got, err := ParseDType(s.name); err != nil || got != s.dt {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", s.name, got, err, s.dt)
		}
	}
	if !Int64.WideInput() || Int8.WideInput() || Float16.WideInput() {
		t.Error("WideInput: int64 must be wide, int8 and float16 not")
	}
}
