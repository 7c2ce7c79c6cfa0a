package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// native is the machine's byte order, the order of nd.Array.Bytes.
var native binary.ByteOrder = binary.NativeEndian

var nativeBig = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// v3DataTypes are Zarr v3's names of the types nd holds ("bool" reads as
// uint8, 0 or 1).
var v3DataTypes = map[string]nd.DType{
	"bool": nd.Uint8, "int8": nd.Int8, "uint8": nd.Uint8, "int16": nd.Int16, "uint16": nd.Uint16,
	"int32": nd.Int32, "uint32": nd.Uint32, "int64": nd.Int64, "uint64": nd.Uint64,
	"float16": nd.Float16, "float32": nd.Float32, "float64": nd.Float64,
	"complex64": nd.Complex64, "complex128": nd.Complex128,
}

const v3DataTypeNames = "bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64, complex64, complex128"

// parseV2DType reads a NumPy type string of Zarr v2 ("<f4", ">i2", "|u1",
// "|b1"): the type and whether it is big-endian.
func parseV2DType(key, s string) (nd.DType, bool, error) {
	unsupported := &UnsupportedError{Key: key, What: "dtype", Value: s,
		Supported: "NumPy's <, > or | with b1, i1-i8, u1-u8, f2-f8, c8, c16"}
	if len(s) < 3 {
		return 0, false, unsupported
	}
	var big bool
	switch s[0] {
	case '<', '|':
	case '>':
		big = true
	default:
		return 0, false, unsupported
	}
	size, err := strconv.Atoi(s[2:])
	if err != nil {
		return 0, false, unsupported
	}
	var name string
	switch s[1] {
	case 'b':
		name = "bool"
	case 'i':
		name = "int"
	case 'u':
		name = "uint"
	case 'f':
		name = "float"
	case 'c':
		name = "complex"
	default:
		return 0, false, unsupported
	}
	switch {
	case name == "bool" && size == 1:
	case name == "complex":
		name += strconv.Itoa(size * 8)
	default:
		name += strconv.Itoa(size * 8)
	}
	dt, ok := v3DataTypes[name]
	if !ok || dt.Size() != size {
		return 0, false, unsupported
	}
	return dt, big && size > 1, nil
}

// v2DType is the NumPy type string of dt in the given byte order.
func v2DType(dt nd.DType, big bool) string {
	order := "<"
	if big {
		order = ">"
	}
	if dt.Size() == 1 {
		order = "|"
	}
	kind := map[nd.DType]byte{nd.Int8: 'i', nd.Int16: 'i', nd.Int32: 'i', nd.Int64: 'i',
		nd.Uint8: 'u', nd.Uint16: 'u', nd.Uint32: 'u', nd.Uint64: 'u',
		nd.Float16: 'f', nd.Float32: 'f', nd.Float64: 'f', nd.Complex64: 'c', nd.Complex128: 'c'}[dt]
	return fmt.Sprintf("%s%c%d", order, kind, dt.Size())
}

// parseFill reads a fill value as JSON into one element of dt in the
// machine's byte order. null (Zarr v2's "no fill value") is zero.
func parseFill(key string, dt nd.DType, raw json.RawMessage) ([]byte, error) {
	out := make([]byte, dt.Size())
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	bad := func(err error) error {
		return formatErrorf(key, err, "fill_value %s is not a %v", raw, dt)
	}
	if dt.IsComplex() {
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
			// A single number is the real part, as some writers give it.
			parts = []json.RawMessage{raw, json.RawMessage("0")}
		}
		h := dt.Size() / 2
		for i, p := range parts {
			b, err := parseFill(key, dt.Part(), p)
			if err != nil {
				return nil, err
			}
			copy(out[i*h:], b)
		}
		return out, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, bad(err)
	}
	if b, ok := v.(bool); ok {
		if b {
			v = json.Number("1")
		} else {
			v = json.Number("0")
		}
	}
	if dt.IsInteger() {
		n, ok := v.(json.Number)
		if !ok {
			return nil, bad(nil)
		}
		lo, hi := dt.IntegerRange()
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			if i < lo || (i > 0 && uint64(i) > hi) {
				return nil, bad(nil)
			}
			putInt(out, uint64(i))
			return out, nil
		}
		if u, err := strconv.ParseUint(string(n), 10, 64); err == nil && u <= hi {
			putInt(out, u)
			return out, nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			return nil, bad(err)
		}
		putInt(out, uint64(int64(f)))
		return out, nil
	}
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(x), 64); err != nil {
			return nil, bad(err)
		}
	case string:
		switch {
		case x == "NaN":
			f = math.NaN()
		case x == "Infinity":
			f = math.Inf(1)
		case x == "-Infinity":
			f = math.Inf(-1)
		case strings.HasPrefix(x, "0x") && len(x) == 2+2*dt.Size():
			// The element's bits, big-endian hex.
			bits, err := strconv.ParseUint(x[2:], 16, 64)
			if err != nil {
				return nil, bad(err)
			}
			putInt(out, bits)
			return out, nil
		default:
			return nil, bad(nil)
		}
	default:
		return nil, bad(nil)
	}
	switch dt {
	case nd.Float16:
		native.PutUint16(out, uint16(nd.HalfOf(f)))
	case nd.Float32:
		native.PutUint32(out, math.Float32bits(float32(f)))
	case nd.Float64:
		native.PutUint64(out, math.Float64bits(f))
	default:
		return nil, bad(nil)
	}
	return out, nil
}

// putInt stores the low len(out) bytes of v in the machine's order.
func putInt(out []byte, v uint64) {
	switch len(out) {
	case 1:
		out[0] = byte(v)
	case 2:
		native.PutUint16(out, uint16(v))
	case 4:
		native.PutUint32(out, uint32(v))
	case 8:
		native.PutUint64(out, v)
	}
}

// fillJSON is the JSON of fill value f as an element of dt: an integer for
// integer types, "NaN" and "±Infinity" for those floats, [re, im] for
// complex types.
func fillJSON(dt nd.DType, f float64) any {
	if dt.IsComplex() {
		return []any{fillJSON(dt.Part(), f), 0.0}
	}
	if dt.IsInteger() {
		lo, hi := dt.Range()
		f = math.Max(lo, math.Min(hi, math.Round(f)))
		if f >= 0 {
			if f >= math.MaxUint64 {
				return uint64(math.MaxUint64)
			}
			return uint64(f)
		}
		return int64(f)
	}
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// fillFloat is the real part of a fill element, as float64 (for Meta).
func fillFloat(dt nd.DType, b []byte) float64 {
	switch dt.Part() {
	case nd.Uint8:
		return float64(b[0])
	case nd.Int8:
		return float64(int8(b[0]))
	case nd.Uint16:
		return float64(native.Uint16(b))
	case nd.Int16:
		return float64(int16(native.Uint16(b)))
	case nd.Uint32:
		return float64(native.Uint32(b))
	case nd.Int32:
		return float64(int32(native.Uint32(b)))
	case nd.Uint64:
		return float64(native.Uint64(b))
	case nd.Int64:
		return float64(int64(native.Uint64(b)))
	case nd.Float16:
		return float64(nd.Half(native.Uint16(b)).Float32())
	case nd.Float32:
		return float64(math.Float32frombits(native.Uint32(b)))
	case nd.Float64:
		return math.Float64frombits(native.Uint64(b))
	}
	return 0
}

// swapBytes reverses the bytes of each unit-byte word of b in place: the
// conversion between byte orders (a complex type's unit is its part's).
func swapBytes(b []byte, unit int) {
	switch unit {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			binary.BigEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:]))
		}
	}
}
