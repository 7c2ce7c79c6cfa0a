package nd

import "math"

// Load converts len(dst) elements of src, starting at src[off], into dst.
// src is an Array's Data; every supported element converts exactly to
// float64, and to float32 as Go's conversion rounds.
func Load[F Float](dst []F, src any, off int) {
	switch s := src.(type) {
	case []uint8:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	case []uint16:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	case []int16:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	case []int32:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	case []float32:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	case []float64:
		for i, v := range s[off : off+len(dst)] {
			dst[i] = F(v)
		}
	}
}

// LoadStrided is Load reading src[off], src[off+stride], ….
func LoadStrided[F Float](dst []F, src any, off, stride int) {
	if stride == 1 {
		Load(dst, src, off)
		return
	}
	switch s := src.(type) {
	case []uint8:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	case []uint16:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	case []int16:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	case []int32:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	case []float32:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	case []float64:
		for i := range dst {
			dst[i] = F(s[off+i*stride])
		}
	}
}

// Store writes src into dst[off], dst[off+stride], … converting each value
// with the rule of Round: integers round half to even and saturate.
func Store[F Float](dst any, off, stride int, src []F) {
	switch d := dst.(type) {
	case []uint8:
		for i, v := range src {
			d[off+i*stride] = uint8(roundSaturate(float64(v), 0, 255))
		}
	case []uint16:
		for i, v := range src {
			d[off+i*stride] = uint16(roundSaturate(float64(v), 0, 65535))
		}
	case []int16:
		for i, v := range src {
			d[off+i*stride] = int16(roundSaturate(float64(v), -32768, 32767))
		}
	case []int32:
		for i, v := range src {
			d[off+i*stride] = int32(roundSaturate(float64(v), -2147483648, 2147483647))
		}
	case []float32:
		if stride == 1 {
			for i, v := range src {
				d[off+i] = float32(v)
			}
			return
		}
		for i, v := range src {
			d[off+i*stride] = float32(v)
		}
	case []float64:
		for i, v := range src {
			d[off+i*stride] = float64(v)
		}
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
