package nd

import "math"

// Load converts len(dst) elements of src, starting at src[off], into dst.
// src is an Array's Data; every supported element converts exactly to
// float64, and to float32 as Go's conversion rounds.
func Load[F Float](dst []F, src any, off int) {
	LoadStrided(dst, src, off, 1)
}

// LoadStrided is Load reading src[off], src[off+stride], ….
func LoadStrided[F Float](dst []F, src any, off, stride int) {
	switch s := src.(type) {
	case []uint8:
		load(dst, s, off, stride)
	case []uint16:
		load(dst, s, off, stride)
	case []int16:
		load(dst, s, off, stride)
	case []int32:
		load(dst, s, off, stride)
	case []float32:
		load(dst, s, off, stride)
	case []float64:
		load(dst, s, off, stride)
	}
}

func load[F Float, T Element](dst []F, src []T, off, stride int) {
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
		storeInteger(d, off, stride, src, 0, 255)
	case []uint16:
		storeInteger(d, off, stride, src, 0, 65535)
	case []int16:
		storeInteger(d, off, stride, src, -32768, 32767)
	case []int32:
		storeInteger(d, off, stride, src, -2147483648, 2147483647)
	case []float32:
		storeFloat(d, off, stride, src)
	case []float64:
		storeFloat(d, off, stride, src)
	}
}

func storeInteger[F Float, T uint8 | uint16 | int16 | int32](dst []T, off, stride int, src []F, lo, hi float64) {
	for i, v := range src {
		dst[off+i*stride] = T(roundSaturate(float64(v), lo, hi))
	}
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

// Round returns v as the element type dt would hold it: integer types round
// half to even and saturate to their range (OpenCV's saturate_cast, not a
// wrapping C cast), NaN becomes 0; float32 rounds to float32; float64 keeps v.
func Round(v float64, dt DType) float64 {
	switch dt {
	case Float32:
		return float64(float32(v))
	case Float64, Unspecified:
		return v
	}
	lo, hi := dt.Range()
	return roundSaturate(v, lo, hi)
}

func roundSaturate(v, lo, hi float64) float64 {
	switch {
	case v != v:
		return 0
	case v <= lo:
		return lo
	case v >= hi:
		return hi
	}
	return math.RoundToEven(v)
}
