package nd

import "math"

// Load converts len(dst) elements of src, starting at src[off], into dst.
// src is an Array's Data; every element converts to float64 exactly except
// 64-bit integers beyond 2⁵³ (rounded to nearest, as numpy and scipy
// convert them), and to float32 as Go's conversion rounds.
func Load[F Float](dst []F, src any, off int) {
	LoadStrided(dst, src, off, 1)
}

// LoadStrided is Load reading src[off], src[off+stride], ….
func LoadStrided[F Float](dst []F, src any, off, stride int) {
	switch s := src.(type) {
	case []uint8:
		load(dst, s, off, stride)
	case []int8:
		load(dst, s, off, stride)
	case []uint16:
		load(dst, s, off, stride)
	case []int16:
		load(dst, s, off, stride)
	case []uint32:
		load(dst, s, off, stride)
	case []int32:
		load(dst, s, off, stride)
	case []uint64:
		load(dst, s, off, stride)
	case []int64:
		load(dst, s, off, stride)
	case []Half:
		for i := range dst {
			dst[i] = F(s[off+i*stride].Float32())
		}
	case []float32:
		load(dst, s, off, stride)
	case []float64:
		load(dst, s, off, stride)
	}
}

func load[F Float, T uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64 | float32 | float64](dst []F, src []T, off, stride int) {
	if same, ok := any(src).([]F); ok && stride == 1 {
		copy(dst, same[off:off+len(dst)])
		return
	}
	if stride == 1 {
		for i, v := range src[off : off+len(dst)] {
			dst[i] = F(v)
		}
		return
	}
	for i := range dst {
		dst[i] = F(src[off+i*stride])
	}
}

// Store writes src into dst[off], dst[off+stride], … converting each value
// with the rule of Round: integers round half to even and saturate.
func Store[F Float](dst any, off, stride int, src []F) {
	switch d := dst.(type) {
	case []uint8:
		storeInteger(d, off, stride, src)
	case []int8:
		storeInteger(d, off, stride, src)
	case []uint16:
		storeInteger(d, off, stride, src)
	case []int16:
		storeInteger(d, off, stride, src)
	case []uint32:
		storeInteger(d, off, stride, src)
	case []int32:
		storeInteger(d, off, stride, src)
	case []uint64:
		storeInteger(d, off, stride, src)
	case []int64:
		storeInteger(d, off, stride, src)
	case []Half:
		for i, v := range src {
			d[off+i*stride] = HalfOf(float64(v))
		}
	case []float32:
		storeFloat(d, off, stride, src)
	case []float64:
		storeFloat(d, off, stride, src)
	}
}

type integer interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64
}

func storeInteger[F Float, T integer](dst []T, off, stride int, src []F) {
	lo, hi := integerBounds[T]()
	for i, v := range src {
		dst[off+i*stride] = saturate(float64(v), lo, hi)
	}
}

// integerBounds returns T's smallest and largest values.
func integerBounds[T integer]() (lo, hi T) {
	hi = ^T(0)
	if hi < 0 { // signed: all ones is −1
		hi = T(uint64(1)<<(8*sizeOf[T]()-1) - 1)
		return -hi - 1, hi
	}
	return 0, hi
}

func sizeOf[T integer]() int {
	var v T
	switch any(v).(type) {
	case uint8, int8:
		return 1
	case uint16, int16:
		return 2
	case uint32, int32:
		return 4
	}
	return 8
}

// saturate rounds v half to even into [lo, hi], NaN giving 0. The
// comparisons are with float64(lo) and float64(hi), which for 64-bit types
// are ±2⁶³ and 2⁶⁴: at or beyond them v saturates, below them the rounded
// v converts exactly.
func saturate[T integer](v float64, lo, hi T) T {
	switch {
	case v != v:
		return 0
	case v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi
	}
	return T(math.RoundToEven(v))
}

func storeFloat[F, T Float](dst []T, off, stride int, src []F) {
	if same, ok := any(src).([]T); ok && stride == 1 {
		copy(dst[off:off+len(src)], same)
		return
	}
	if stride == 1 {
		for i, v := range src {
			dst[off+i] = T(v)
		}
		return
	}
	for i, v := range src {
		dst[off+i*stride] = T(v)
	}
}

// Round returns v as the element type dt would hold it, as float64:
// integer types round half to even and saturate to their range (OpenCV's
// saturate_cast, not a wrapping C cast), NaN becoming 0; float32 and
// float16 round to nearest even; float64 keeps v.
func Round(v float64, dt DType) float64 {
	var one [1]float64
	switch dt {
	case Float64, Unspecified:
		return v
	case Float32:
		return float64(float32(v))
	}
	a, err := New(dt, 1)
	if err != nil {
		return v
	}
	Store(a.Data, 0, 1, []float64{v})
	Load(one[:], a.Data, 0)
	return one[0]
}
