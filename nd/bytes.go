package nd

import (
	"reflect"
	"unsafe"
)

// Bytes views a's data as bytes in the machine's byte order, without
// copying: what a backend copies to or from a device. It is nil for an
// array with no data or of an unknown type.
func (a Array) Bytes() []byte {
	switch d := a.Data.(type) {
	case []uint8:
		return d
	case []int8:
		return AsBytes(d)
	case []uint16:
		return AsBytes(d)
	case []int16:
		return AsBytes(d)
	case []uint32:
		return AsBytes(d)
	case []int32:
		return AsBytes(d)
	case []uint64:
		return AsBytes(d)
	case []int64:
		return AsBytes(d)
	case []Half:
		return AsBytes(d)
	case []float32:
		return AsBytes(d)
	case []float64:
		return AsBytes(d)
	case []complex64:
		return AsBytes(d)
	case []complex128:
		return AsBytes(d)
	}
	return nil
}

// AsBytes views a slice of fixed-size numbers as its bytes in the
// machine's byte order (no copy); nil for an empty slice. It is the one
// byte view every backend uses for host data and kernel parameters.
func AsBytes[T ~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64 | ~complex64 | ~complex128](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// SliceData returns elements lo to hi of array data (a slice of any
// Element type) as a slice of the same type, sharing its memory.
func SliceData(data any, lo, hi int) any {
	return reflect.ValueOf(data).Slice(lo, hi).Interface()
}

// ViewBytes views b, elements of dt in the machine's byte order, as a
// slice of dt's Go type sharing b's memory (a memory map's pages, say). b
// must be aligned for dt.
func ViewBytes(dt DType, b []byte) any {
	zero, err := New(dt, 0)
	if err != nil || len(b) == 0 {
		return zero.Data
	}
	elem := reflect.TypeOf(zero.Data).Elem()
	return reflect.SliceAt(elem, unsafe.Pointer(unsafe.SliceData(b)), len(b)/dt.Size()).Interface()
}

// Overlap reports whether the data of a and b share any byte of memory,
// whatever their element types: one array is the other (an in-place
// call), or both are views of one buffer. Arrays with no elements share
// nothing.
func Overlap(a, b Array) bool {
	x, y := a.Bytes(), b.Bytes()
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	px, py := uintptr(unsafe.Pointer(unsafe.SliceData(x))), uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	return px < py+uintptr(len(y)) && py < px+uintptr(len(x))
}
