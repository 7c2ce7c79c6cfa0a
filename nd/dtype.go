package nd

import (
	"fmt"
	"math"
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
	Int8
	Uint32
	Int64
	Uint64
	Float16    // IEEE 754 binary16, held as Half; computed in float32
	Complex64  // two float32 parts (numpy's complex64, '<c8')
	Complex128 // two float64 parts (numpy's complex128, '<c16')
)

// Half is an IEEE 754 binary16 (numpy's float16) value, stored as its bits.
// It is a storage type only: values are loaded into float32 or float64
// exactly and stored with one rounding to nearest even (Store, Round).
type Half uint16

// Element is the set of Go types an Array may hold.
type Element interface {
	RealElement | complex64 | complex128
}

// RealElement is the set of Go types of the real element types (DTypes).
type RealElement interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64 | Half | float32 | float64
}

// Float is the set of accumulator types.
type Float interface {
	float32 | float64
}

// dtypeInfo is what ndconv knows of each DType: numpy's name and short
// forms, the size in bytes and, for integers, the range.
var dtypeInfo = [...]struct {
	name    string
	short   []string
	size    int
	integer bool
	lo      int64
	hi      uint64
}{
	Unspecified: {name: "unspecified"},
	Uint8:       {"uint8", []string{"u1"}, 1, true, 0, math.MaxUint8},
	Uint16:      {"uint16", []string{"u2", "u16"}, 2, true, 0, math.MaxUint16},
	Int16:       {"int16", []string{"i2", "i16"}, 2, true, math.MinInt16, math.MaxInt16},
	Int32:       {"int32", []string{"i4", "i32"}, 4, true, math.MinInt32, math.MaxInt32},
	Float32:     {"float32", []string{"f4", "f32", "single"}, 4, false, 0, 0},
	Float64:     {"float64", []string{"f8", "f64", "double"}, 8, false, 0, 0},
	Int8:        {"int8", []string{"i1"}, 1, true, math.MinInt8, math.MaxInt8},
	Uint32:      {"uint32", []string{"u4", "u32"}, 4, true, 0, math.MaxUint32},
	Int64:       {"int64", []string{"i8", "i64"}, 8, true, math.MinInt64, math.MaxInt64},
	Uint64:      {"uint64", []string{"u8", "u64"}, 8, true, 0, math.MaxUint64},
	Float16:     {"float16", []string{"f2", "f16", "half"}, 2, false, 0, 0},
	Complex64:   {"complex64", []string{"c8", "c64"}, 8, false, 0, 0},
	Complex128:  {"complex128", []string{"c16", "c128", "complex"}, 16, false, 0, 0},
}

// DTypes lists the real element types: those every engine computes
// directly.
var DTypes = []DType{Uint8, Int8, Uint16, Int16, Uint32, Int32, Uint64, Int64, Float16, Float32, Float64}

// ComplexDTypes lists the complex element types. Their filtering is a few
// real correlations of their parts (Problem.RealParts), so engines never
// see them.
var ComplexDTypes = []DType{Complex64, Complex128}

// allDTypes is every supported element type, for parsing and messages.
var allDTypes = append(append([]DType(nil), DTypes...), ComplexDTypes...)

func (d DType) String() string {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes of one element.
func (d DType) Size() int {
	if d.Valid() {
		return dtypeInfo[d].size
	}
	return 0
}

// Valid reports whether d is one of DTypes or ComplexDTypes.
func (d DType) Valid() bool { return d > Unspecified && int(d) < len(dtypeInfo) }

// IsInteger reports whether d holds integers (and so rounds and saturates).
func (d DType) IsInteger() bool { return d.Valid() && dtypeInfo[d].integer }

// IntegerRange is the exact closed interval an integer type holds (0, 0
// for floats).
func (d DType) IntegerRange() (lo int64, hi uint64) {
	if !d.Valid() {
		return 0, 0
	}
	return dtypeInfo[d].lo, dtypeInfo[d].hi
}

// Range is the closed interval an integer type can hold, as float64 (the
// 64-bit bounds round to ±2⁶³ and 2⁶⁴, where saturation starts); for
// floats it is (-Inf, +Inf).
func (d DType) Range() (lo, hi float64) {
	if !d.IsInteger() {
		return negInf, posInf
	}
	return float64(dtypeInfo[d].lo), float64(dtypeInfo[d].hi)
}

// WideInput reports whether values of d need float64 accumulation: float32
// cannot hold every int32, uint32, int64 or uint64 (nor, of course, every
// float64 or complex128 part) exactly, as scipy.ndimage computes them in
// double.
func (d DType) WideInput() bool {
	switch d.Part() {
	case Float64, Int32, Uint32, Int64, Uint64:
		return true
	}
	return false
}

// IsComplex reports whether d is complex64 or complex128.
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// Part is the type of a complex type's real and imaginary parts (float32
// for complex64, float64 for complex128); a real type is its own part.
func (d DType) Part() DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// ComplexResult is the output type scipy.ndimage gives complex filtering
// of data of type d: numpy.promote_types(d, complex64), which is
// complex128 for the types that need float64 accumulation and complex64
// for the others.
func (d DType) ComplexResult() DType {
	if d.WideInput() {
		return Complex128
	}
	return Complex64
}

// DTypeNames lists the dtypes by name ("uint8, int8, …"), for help texts
// and errors.
func DTypeNames() string {
	var names []string
	for _, d := range allDTypes {
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}

// ParseDType accepts the names numpy prints (uint8, float32, …) and their
// short forms (u1, f4, …). "i8" and "u8" are numpy's 8-byte codes (int64,
// uint64), as in a .npy descr; "int8" and "uint8" are the 1-byte types.
func ParseDType(s string) (DType, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, d := range allDTypes {
		if name == dtypeInfo[d].name {
			return d, nil
		}
	}
	for _, d := range allDTypes {
		for _, short := range dtypeInfo[d].short {
			if name == short {
				return d, nil
			}
		}
	}
	return Unspecified, &UnsupportedError{What: "dtype", Value: s, Supported: DTypeNames()}
}

// DTypeOf reports the DType of a slice held in an Array's Data.
func DTypeOf(data any) DType {
	switch data.(type) {
	case []uint8:
		return Uint8
	case []int8:
		return Int8
	case []uint16:
		return Uint16
	case []int16:
		return Int16
	case []uint32:
		return Uint32
	case []int32:
		return Int32
	case []uint64:
		return Uint64
	case []int64:
		return Int64
	case []Half:
		return Float16
	case []float32:
		return Float32
	case []float64:
		return Float64
	case []complex64:
		return Complex64
	case []complex128:
		return Complex128
	}
	return Unspecified
}
