package nd

import "unsafe"

// Bytes views a's data as bytes in the machine's byte order, without
// copying: what a backend copies to or from a device. It is nil for an
// array with no data or of an unknown type.
func (a Array) Bytes() []byte {
	switch d := a.Data.(type) {
	case []uint8:
		return d
	case []uint16:
		return asBytes(d)
	case []int16:
		return asBytes(d)
	case []int32:
		return asBytes(d)
	case []float32:
		return asBytes(d)
	case []float64:
		return asBytes(d)
	}
	return nil
}

func asBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}
