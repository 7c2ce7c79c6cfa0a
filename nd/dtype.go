package nd

import (
	"fmt"
	"strings"
)

// DType names an element type. The zero value, Unspecified, means "not given"
// where a DType is optional (an output type defaults to the input's).
type DType uint8

const (
	Unspecified DType = iota
	Uint8
	Uint16
	Int16
	Int32
	Float32
	Float64
)

// Element is the set of Go types an Array may hold.
type Element interface {
	uint8 | uint16 | int16 | int32 | float32 | float64
}

// Float is the set of accumulator types.
type Float interface {
	float32 | float64
}

var dtypeNames = [...]string{
	Unspecified: "unspecified",
	Uint8:       "uint8",
	Uint16:      "uint16",
	Int16:       "int16",
	Int32:       "int32",
	Float32:     "float32",
	Float64:     "float64",
}

// DTypes lists every supported element type.
var DTypes = []DType{Uint8, Uint16, Int16, Int32, Float32, Float64}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes of one element.
func (d DType) Size() int {
	switch d {
	case Uint8:
		return 1
	case Uint16, Int16:
		return 2
	case Int32, Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// Valid reports whether d is one of DTypes.
func (d DType) Valid() bool { return d >= Uint8 && d <= Float64 }

// IsInteger reports whether d holds integers (and so rounds and saturates).
func (d DType) IsInteger() bool { return d >= Uint8 && d <= Int32 }

// Range is the closed interval an integer type can hold; for floats it is
// (-Inf, +Inf).
func (d DType) Range() (lo, hi float64) {
	switch d {
	case Uint8:
		return 0, 255
	case Uint16:
		return 0, 65535
	case Int16:
		return -32768, 32767
	case Int32:
		return -2147483648, 2147483647
	}
	return negInf, posInf
}

// ParseDType accepts the names numpy prints (uint8, float32, …) and their
// short forms (u1, f4, …).
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "uint8", "u1", "u8":
		return Uint8, nil
	case "uint16", "u2", "u16":
		return Uint16, nil
	case "int16", "i2", "i16":
		return Int16, nil
	case "int32", "i4", "i32":
		return Int32, nil
	case "float32", "f4", "f32", "single":
		return Float32, nil
	case "float64", "f8", "f64", "double":
		return Float64, nil
	}
	return Unspecified, &UnsupportedError{What: "dtype", Value: s, Supported: "uint8, uint16, int16, int32, float32, float64"}
}

// DTypeOf reports the DType of a slice held in an Array's Data.
func DTypeOf(data any) DType {
	switch data.(type) {
	case []uint8:
		return Uint8
	case []uint16:
		return Uint16
	case []int16:
		return Int16
	case []int32:
		return Int32
	case []float32:
		return Float32
	case []float64:
		return Float64
	}
	return Unspecified
}
