package nd

import "math"

// Load converts len(dst) elements of src, starting at src[off], into dst.
// src is an Array's Data; every element converts to float64 exactly except
// 64-bit integers beyond 2⁵³ (rounded to nearest, as numpy and scipy
// convert them), and to float32 as Go's conversion rounds. Of complex
// elements it loads the real parts (Array.Parts gives both).
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
	case []complex64:
		for i := range dst {
			dst[i] = F(real(s[off+i*stride]))
		}
	case []complex128:
		for i := range dst {
			dst[i] = F(real(s[off+i*stride]))
		}
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
// with the rule of Round: integers round half to even and saturate; into
// complex elements the values go as real parts, with imaginary parts 0.
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
	case []complex64, []complex128:
		StoreComplex(d, off, stride, src, nil)
	}
}

// StoreComplex writes re[i] + im[i]·i into dst[off+i*stride], where dst is
// the data of a complex array, rounding each part once to the part type;
// a nil im writes imaginary parts 0.
func StoreComplex[F Float](dst any, off, stride int, re, im []F) {
	if im == nil {
		im = make([]F, len(re))
	}
	im = im[:len(re)]
	switch d := dst.(type) {
	case []complex64:
		for i, v := range re {
			d[off+i*stride] = complex(float32(v), float32(im[i]))
		}
	case []complex128:
		for i, v := range re {
			d[off+i*stride] = complex(float64(v), float64(im[i]))
		}
	}
}

// Parts returns a complex array's real and imaginary parts as two new
// arrays of its Part type (float32 for complex64, float64 for
// complex128). A real array is its own real part and has no imaginary
// one: Parts returns a itself and an Array with no Data.
func (a Array) Parts() (re, im Array) {
	if !a.DType().IsComplex() {
		return a, Array{}
	}
	re, _ = New(a.DType().Part(), a.Shape...)
	im, _ = New(a.DType().Part(), a.Shape...)
	SplitParts(re.Data, im.Data, a.Data)
	return re, im
}

// SplitParts writes the real and imaginary parts of src, a complex array's
// data, into re and im, slices of its part type and length.
func SplitParts(re, im, src any) {
	switch s := src.(type) {
	case []complex64:
		r, m := re.([]float32)[:len(s)], im.([]float32)[:len(s)]
		for i, v := range s {
			r[i], m[i] = real(v), imag(v)
		}
	case []complex128:
		r, m := re.([]float64)[:len(s)], im.([]float64)[:len(s)]
		for i, v := range s {
			r[i], m[i] = real(v), imag(v)
		}
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
// float16 round to nearest even; float64 keeps v. Of a complex type, v is
// one part, rounded as the part type.
func Round(v float64, dt DType) float64 {
	var one [1]float64
	switch dt.Part() {
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
