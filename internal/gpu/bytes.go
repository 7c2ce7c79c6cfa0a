package gpu

import (
	"unsafe"

	"github.com/ndconv/ndconv/kernels"
)

// AsBytes views a slice of fixed-size numbers as its bytes (no copy); nil
// for an empty slice.
func AsBytes[T ~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// TapsBytes returns a launch's weights in its accumulation type, as bytes:
// float64 where l.Wide (ACC_T is double), else rounded to float32.
func TapsBytes(l *kernels.Launch) []byte {
	if l.Wide {
		return AsBytes(l.Taps)
	}
	w := make([]float32, len(l.Taps))
	for i, v := range l.Taps {
		w[i] = float32(v)
	}
	return AsBytes(w)
}
