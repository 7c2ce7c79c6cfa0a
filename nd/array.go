package nd

import (
	"fmt"
	"math"
)

// MaxElements bounds the number of elements of any array ndconv allocates,
// so that a corrupt header or a typo in a shape fails with an error instead
// of exhausting memory. 1<<34 elements is 64 GiB of float32.
const MaxElements = 1 << 34

// MaxShapeElements bounds the number of elements of a shape ndconv
// describes without allocating it whole — a problem, a file mapped or
// written chunk by chunk, which streaming runs through memory a chunk at a
// time — so that a volume larger than memory (a 3072³ uint8 volume has
// 1.7 · MaxElements elements) runs, while every byte count of such a shape
// (at most 16 bytes an element) stays far inside an int64.
const MaxShapeElements = 1 << 40

// Array is an n-dimensional C-order array. Data holds exactly
// NumElements(Shape) values as a slice of one of the Element types
// ([]uint8, []int8, …, []float64, []complex64, []complex128; float16 as
// []Half); its Go type is the array's DType.
type Array struct {
	Shape []int
	Data  any
}

// DType reports the element type of a.
func (a Array) DType() DType { return DTypeOf(a.Data) }

// Len is the number of elements of a.
func (a Array) Len() int {
	n := 1
	for _, s := range a.Shape {
		n *= s
	}
	return n
}

// NumElements returns the product of shape, or an error if an extent is
// negative or the product exceeds MaxElements: the count of an array about
// to be allocated.
func NumElements(shape []int) (int, error) {
	return elementsUpTo(shape, MaxElements)
}

// ShapeElements returns the product of shape, or an error if an extent is
// negative or the product exceeds MaxShapeElements: the count of a shape
// that is described, mapped or streamed, not allocated whole.
func ShapeElements(shape []int) (int, error) {
	return elementsUpTo(shape, MaxShapeElements)
}

func elementsUpTo(shape []int, limit int) (int, error) {
	n := 1
	for i, s := range shape {
		if s < 0 {
			return 0, argErrorf("shape", "axis %d has negative length %d", i, s)
		}
		if s > limit {
			// Also where another axis has length 0: every length then
			// stays far from overflowing the arithmetic on it (n+k−1).
			return 0, argErrorf("shape", "axis %d has length %d, more than %d", i, s, limit)
		}
		if s != 0 && n > limit/s {
			return 0, argErrorf("shape", "%v has more than %d elements", shape, limit)
		}
		n *= s
	}
	return n, nil
}

// New allocates a zeroed array.
func New(dt DType, shape ...int) (Array, error) {
	n, err := NumElements(shape)
	if err != nil {
		return Array{}, err
	}
	var data any
	switch dt {
	case Uint8:
		data = make([]uint8, n)
	case Int8:
		data = make([]int8, n)
	case Uint16:
		data = make([]uint16, n)
	case Int16:
		data = make([]int16, n)
	case Uint32:
		data = make([]uint32, n)
	case Int32:
		data = make([]int32, n)
	case Uint64:
		data = make([]uint64, n)
	case Int64:
		data = make([]int64, n)
	case Float16:
		data = make([]Half, n)
	case Float32:
		data = make([]float32, n)
	case Float64:
		data = make([]float64, n)
	case Complex64:
		data = make([]complex64, n)
	case Complex128:
		data = make([]complex128, n)
	default:
		return Array{}, &UnsupportedError{What: "dtype", Value: dt.String()}
	}
	return Array{Shape: append([]int(nil), shape...), Data: data}, nil
}

// FromSlice makes an Array of data without copying it.
func FromSlice[T Element](data []T, shape ...int) (Array, error) {
	n, err := NumElements(shape)
	if err != nil {
		return Array{}, err
	}
	if n != len(data) {
		return Array{}, argErrorf("shape", "%v needs %d elements, the data has %d", shape, n, len(data))
	}
	return Array{Shape: append([]int(nil), shape...), Data: data}, nil
}

// Slice returns a's data as []T, or false if a holds another type.
func Slice[T Element](a Array) ([]T, bool) {
	s, ok := a.Data.([]T)
	return s, ok
}

// Check verifies that a's data is of a supported type and matches its shape.
func (a Array) Check() error {
	if !a.DType().Valid() {
		return &UnsupportedError{What: "array data", Value: fmt.Sprintf("%T", a.Data), Supported: "a slice of " + DTypeNames() + " (float16 as []nd.Half)"}
	}
	n, err := ShapeElements(a.Shape) // the data exist already: mapped, perhaps
	if err != nil {
		return err
	}
	if l := dataLen(a.Data); l != n {
		return argErrorf("array", "shape %v needs %d elements, the data has %d", a.Shape, n, l)
	}
	return nil
}

func dataLen(data any) int {
	switch d := data.(type) {
	case []uint8:
		return len(d)
	case []int8:
		return len(d)
	case []uint16:
		return len(d)
	case []int16:
		return len(d)
	case []uint32:
		return len(d)
	case []int32:
		return len(d)
	case []uint64:
		return len(d)
	case []int64:
		return len(d)
	case []Half:
		return len(d)
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []complex64:
		return len(d)
	case []complex128:
		return len(d)
	}
	return -1
}

// Float64s returns a copy of a's values as float64, exact for every DType
// but 64-bit integers beyond 2⁵³ (rounded, as numpy converts them); of a
// complex array, the real parts (see Parts).
func (a Array) Float64s() []float64 {
	out := make([]float64, dataLen(a.Data))
	Load(out, a.Data, 0)
	return out
}

// Strides returns the C-order element strides of shape.
func Strides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)
