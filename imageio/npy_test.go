package imageio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

var update = flag.Bool("update", false, "rewrite generated files under testdata (the fuzz seed corpus)")

// onlyReader hides every method of r but Read, so that ReadNPY cannot tell
// the size of the source.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// sameArray reports whether a and b have equal shapes and bitwise equal data.
func sameArray(a, b nd.Array) bool {
	return slices.Equal(a.Shape, b.Shape) && a.DType() == b.DType() && bytes.Equal(a.Bytes(), b.Bytes())
}

// randArray makes an array of dt and shape with values spread over the
// type's range; floats include NaN, ±Inf and -0.
func randArray(t testing.TB, rng *rand.Rand, dt nd.DType, shape []int) nd.Array {
	t.Helper()
	a, err := nd.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := dt.Range()
	for i := range a.Len() {
		var v float64
		if dt.IsInteger() {
			v = lo + math.Floor(rng.Float64()*(hi-lo+1))
		} else {
			switch rng.IntN(10) {
			case 0:
				v = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}[rng.IntN(4)]
			default:
				v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		nd.StoreComplex(a.Data, i, 1, []float64{v}, []float64{rng.NormFloat64()})
		if !dt.IsComplex() {
			nd.Store(a.Data, i, 1, []float64{v})
		}
	}
	return a
}

// npyBytes assembles a .npy file by hand.
func npyBytes(major byte, header string, data []byte) []byte {
	b := append([]byte(npyMagic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	}
	b = append(b, header...)
	return append(b, data...)
}

// encodeValues writes the elements of a with the given byte order.
func encodeValues(a nd.Array, order binary.AppendByteOrder) []byte {
	b, err := binary.Append(nil, order.(binary.ByteOrder), a.Data)
	if err != nil {
		panic(err)
	}
	return b
}

func shapeRepr(shape []int) string {
	s := make([]string, len(shape))
	for i, v := range shape {
		s[i] = fmt.Sprint(v)
	}
	if len(shape) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

var typeChar = map[nd.DType]string{nd.Uint8: "u1", nd.Uint16: "u2", nd.Int16: "i2", nd.Int32: "i4", nd.Float32: "f4", nd.Float64: "f8",
	nd.Int8: "i1", nd.Uint32: "u4", nd.Int64: "i8", nd.Uint64: "u8", nd.Float16: "f2", nd.Complex64: "c8", nd.Complex128: "c16"}

// readAllWays reads b with a known size (bytes.Reader) and an unknown one
// and checks that both agree.
func readAllWays(t *testing.T, b []byte) (nd.Array, error) {
	t.Helper()
	a, err := ReadNPY(bytes.NewReader(b))
	a2, err2 := ReadNPY(onlyReader{bytes.NewReader(b)})
	if (err == nil) != (err2 == nil) {
		t.Fatalf("known size: %v; unknown size: %v", err, err2)
	}
	if err == nil && !sameArray(a, a2) {
		t.Fatalf("known and unknown size read different arrays")
	}
	return a, err
}

type goldenArray struct {
	DType     string `json:"dtype"`
	Shape     []int  `json:"shape"`
	Values    []any  `json:"values"` // of a complex array, the real parts
	Imag      []any  `json:"imag"`
	SameBytes bool   `json:"same_bytes"`
}

type golden struct {
	NumpyVersion string                 `json:"numpy_version"`
	Arrays       map[string]goldenArray `json:"arrays"`
	Unsupported  map[string]string      `json:"unsupported"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/npy/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Arrays) == 0 || len(g.Unsupported) == 0 {
		t.Fatal("expected.json lists no files")
	}
	return g
}

func jsonFloat(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	}
	t.Fatalf("bad value %v in expected.json", v)
	return 0
}

// TestReadNPYGolden reads the files numpy wrote (testdata/npy/make_npy.py)
// and compares them with the values numpy printed.
func TestReadNPYGolden(t *testing.T) {
	g := loadGolden(t)
	for name, want := range g.Arrays {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata/npy", name)
			a, err := ReadNPYFile(path)
			if err != nil {
				t.Fatal(err)
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := readAllWays(t, file)
			if err != nil {
				t.Fatal(err)
			}
			if !sameArray(a, b) {
				t.Fatal("ReadNPYFile and ReadNPY differ")
			}
			if a.DType().String() != want.DType {
				t.Fatalf("dtype %v, want %s", a.DType(), want.DType)
			}
			if !slices.Equal(a.Shape, want.Shape) || a.Shape == nil {
				t.Fatalf("shape %v, want %v", a.Shape, want.Shape)
			}
			if a.Len() != len(want.Values) {
				t.Fatalf("%d elements, want %d", a.Len(), len(want.Values))
			}
			re, im := a.Parts()
			if (im.Data != nil) != (want.Imag != nil) {
				t.Fatalf("imaginary parts: %v, want %v", im.Data != nil, want.Imag != nil)
			}
			for _, part := range []struct {
				got  nd.Array
				want []any
			}{{re, want.Values}, {im, want.Imag}} {
				if part.want == nil {
					continue
				}
				got := part.got.Float64s()
				for i, v := range part.want {
					w := jsonFloat(t, v)
					if math.IsNaN(w) && math.IsNaN(got[i]) {
						continue
					}
					if math.Float64bits(w) != math.Float64bits(got[i]) {
						t.Fatalf("element %d = %v, want %v", i, got[i], w)
					}
				}
			}
			var buf bytes.Buffer
			if err := WriteNPY(&buf, a); err != nil {
				t.Fatal(err)
			}
			if want.SameBytes && !bytes.Equal(buf.Bytes(), file) {
				t.Errorf("WriteNPY differs from numpy %s's np.save:\n got %q\nwant %q", g.NumpyVersion, buf.Bytes(), file)
			}
			c, err := ReadNPY(&buf)
			if err != nil || !sameArray(a, c) {
				t.Fatalf("re-read after WriteNPY: %v", err)
			}
		})
	}
}

func TestReadNPYUnsupportedGolden(t *testing.T) {
	g := loadGolden(t)
	for name, word := range g.Unsupported {
		t.Run(name, func(t *testing.T) {
			_, err := ReadNPYFile(filepath.Join("testdata/npy", name))
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v (%T), want an *UnsupportedError", err, err)
			}
			if ue.What != "dtype" || !strings.Contains(err.Error(), word) || !strings.HasPrefix(err.Error(), "imageio: unsupported .npy dtype ") {
				t.Fatalf("error %q does not name the dtype as %q", err, word)
			}
		})
	}
}

func TestNPYRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range append(nd.DTypes, nd.ComplexDTypes...) {
		for rank := 0; rank <= 5; rank++ {
			for trial := range 4 {
				shape := make([]int, rank)
				for i := range shape {
					shape[i] = rng.IntN(5) + 1
					if trial == 3 && i == rank-1 {
						shape[i] = 0
					}
				}
				a := randArray(t, rng, dt, shape)
				var buf bytes.Buffer
				if err := WriteNPY(&buf, a); err != nil {
					t.Fatal(err)
				}
				file := buf.Bytes()
				hlen := int(binary.LittleEndian.Uint16(file[8:]))
				if file[6] != 1 || (10+hlen)%64 != 0 || file[10+hlen-1] != '\n' {
					t.Fatalf("%v %v: header not version 1.0 padded to 64 bytes: %q", dt, shape, file[:10+hlen])
				}
				if len(file) != 10+hlen+a.Len()*dt.Size() {
					t.Fatalf("%v %v: file has %d bytes", dt, shape, len(file))
				}
				b, err := readAllWays(t, file)
				if err != nil {
					t.Fatalf("%v %v: %v", dt, shape, err)
				}
				if !sameArray(a, b) {
					t.Fatalf("%v %v: round trip changed the array", dt, shape)
				}
			}
		}
	}
}

// TestNPYByteOrders reads hand-made files in both byte orders and with
// every spelling of the byte-order character.
func TestNPYByteOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range append(nd.DTypes, nd.ComplexDTypes...) {
		a := randArray(t, rng, dt, []int{3, 4})
		orders := []struct {
			prefix string
			order  binary.AppendByteOrder
		}{{"<", binary.LittleEndian}, {">", binary.BigEndian}, {"=", binary.LittleEndian}, {"", binary.LittleEndian}, {"|", binary.LittleEndian}}
		for _, o := range orders {
			descr := o.prefix + typeChar[dt]
			header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (3, 4), }\n", descr)
			b, err := readAllWays(t, npyBytes(1, header, encodeValues(a, o.order)))
			if err != nil {
				t.Fatalf("%s: %v", descr, err)
			}
			if !sameArray(a, b) {
				t.Fatalf("%s: wrong values", descr)
			}
		}
	}
}

// TestNPYFortranOrder reads hand-made Fortran-order files of ranks 1 to 4
// whose values encode their C index.
func TestNPYFortranOrder(t *testing.T) {
	for _, shape := range [][]int{{5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 2}, {1, 5}, {4, 1}, {0, 3}} {
		for _, dt := range []nd.DType{nd.Float64, nd.Int16, nd.Uint8} {
			n, _ := nd.NumElements(shape)
			want, _ := nd.New(dt, shape...)
			fdata, _ := nd.New(dt, n)
			cs := nd.Strides(shape)
			idx := make([]int, len(shape))
			for c := range n {
				// C index c → multi-index → Fortran offset.
				r := c
				for k := range shape {
					idx[k] = r / cs[k]
					r %= cs[k]
				}
				f, s := 0, 1
				for k := range shape {
					f += idx[k] * s
					s *= shape[k]
				}
				v := []float64{float64(c % 200)}
				nd.Store(want.Data, c, 1, v)
				nd.Store(fdata.Data, f, 1, v)
			}
			order := binary.AppendByteOrder(binary.LittleEndian)
			descr := "<" + typeChar[dt]
			if dt == nd.Int16 {
				order, descr = binary.BigEndian, ">i2"
			}
			header := fmt.Sprintf("{'descr': '%s', 'fortran_order': True, 'shape': %s, }\n", descr, shapeRepr(shape))
			got, err := readAllWays(t, npyBytes(1, header, encodeValues(fdata, order)))
			if err != nil {
				t.Fatalf("%v %v: %v", shape, dt, err)
			}
			if !sameArray(got, want) {
				t.Fatalf("%v %v: got %v, want %v", shape, dt, got.Data, want.Data)
			}
		}
	}
}

func TestNPYVersions(t *testing.T) {
	a, _ := nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	data := encodeValues(a, binary.LittleEndian)
	header := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n"
	for _, major := range []byte{1, 2, 3} {
		b, err := readAllWays(t, npyBytes(major, header, data))
		if err != nil || !sameArray(a, b) {
			t.Fatalf("version %d.0: %v", major, err)
		}
	}
	// WriteNPY switches to version 2.0 when the header outgrows 65535
	// bytes: a rank-64 shape cannot do that, so check the header function.
	shape := make([]int, 30000)
	for i := range shape {
		shape[i] = 1
	}
	h := npyHeaderBytes("<f4", false, shape)
	if h[6] != 2 || len(h)%64 != 0 || int(binary.LittleEndian.Uint32(h[8:]))+12 != len(h) || h[len(h)-1] != '\n' {
		t.Fatalf("long header: version %d, %d bytes", h[6], len(h))
	}
	if _, err := parseNPYHeader(h[12:]); err == nil || !strings.Contains(err.Error(), "axes") {
		t.Fatalf("30000 axes: %v", err)
	}
}

// TestNPYHeaderSyntax checks that headers written by other programs, with
// keys in any order, either quote, odd spacing and trailing commas, parse.
func TestNPYHeaderSyntax(t *testing.T) {
	cases := []struct {
		header string
		shape  []int
	}{
		{`{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }`, []int{2, 3}},
		{`{"shape": (2,3), "descr": "<u2", "fortran_order": False}`, []int{2, 3}},
		{`{'fortran_order':False,'shape':(2,3,),'descr':'<u2'}`, []int{2, 3}},
		{"  {\n 'descr' : '<u2' ,\t'fortran_order' : False , 'shape' : ( 6 , ) , }\n\n", []int{6}},
		{`{'descr': '<u2', 'fortran_order': False, 'shape': (6L,), }`, []int{6}},
		{`{'descr': '<u2', 'fortran_order': False, 'shape': (1, 6), }` + strings.Repeat(" ", 40) + "\n", []int{1, 6}},
		{`{'descr': '<u2', 'fortran_order': False, 'shape': (), }`, []int{}},
		{`{'descr': '<u2', 'fortran_order': False, 'shape': ((6,)), }`, []int{6}},
	}
	for _, c := range cases {
		n, _ := nd.NumElements(c.shape)
		b, err := readAllWays(t, npyBytes(1, c.header, make([]byte, 2*n)))
		if err != nil {
			t.Errorf("%q: %v", c.header, err)
			continue
		}
		if !slices.Equal(b.Shape, c.shape) || b.Shape == nil || b.Len() != n {
			t.Errorf("%q: shape %v, want %v", c.header, b.Shape, c.shape)
		}
	}
}

// TestReadNPYBad feeds broken files and checks the error type and message.
func TestReadNPYBad(t *testing.T) {
	valid := npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", make([]byte, 24))
	hdr := func(dict string) []byte { return npyBytes(1, dict+"\n", make([]byte, 64)) }
	dict := func(descr, fortran, shape string) []byte {
		return hdr(fmt.Sprintf("{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape))
	}
	v2 := func(hlen uint32) []byte {
		return binary.LittleEndian.AppendUint32([]byte(npyMagic+"\x02\x00"), hlen)
	}
	const (
		format = iota
		unsupported
	)
	cases := []struct {
		name string
		in   []byte
		kind int
		msg  string
	}{
		{"empty", nil, format, "empty file"},
		{"wrong magic", []byte("\x89PNG\r\n\x1a\n...."), format, "not a .npy file"},
		{"text", []byte("hello, world"), format, "not a .npy file"},
		{"truncated magic", []byte("\x93NUM"), format, "truncated magic"},
		{"truncated version", []byte("\x93NUMPY\x01"), format, "truncated version"},
		{"truncated header length", []byte("\x93NUMPY\x01\x00\x10"), format, "truncated header length"},
		{"truncated header length v2", []byte("\x93NUMPY\x02\x00\x10\x00\x00"), format, "truncated header length"},
		{"truncated header", valid[:40], format, "header"},
		{"truncated data", valid[:len(valid)-1], format, "data"},
		{"no data", valid[:len(valid)-24], format, "data"},
		{"header longer than file", npyBytes(1, "{}", nil)[:10], format, "header"},
		{"header length over limit", v2(1 << 30), format, "exceeds the limit"},
		{"version 4", []byte("\x93NUMPY\x04\x00\x10\x00"), unsupported, `format version "4.0"`},
		{"version 1.1", []byte("\x93NUMPY\x01\x01\x10\x00"), unsupported, `format version "1.1"`},
		{"version 0", []byte("\x93NUMPY\x00\x00\x10\x00"), unsupported, "format version"},
		{"not a dict", hdr("['descr', 'shape']"), format, "not a dict"},
		{"empty header", hdr(""), format, "malformed header"},
		{"garbage", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk"), format, "malformed header"},
		{"unclosed dict", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "), format, "malformed header"},
		{"unclosed string", hdr("{'descr: '<f4'}"), format, "malformed header"},
		{"missing colon", hdr("{'descr' '<f4'}"), format, "malformed header"},
		{"missing comma", hdr("{'descr': '<f4' 'shape': (2, 3)}"), format, "malformed header"},
		{"expression", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2*3,), }"), format, "malformed header"},
		{"call", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os'), }"), format, "malformed header"},
		{"float dim", dict("'<f4'", "False", "(2.0, 3)"), format, "malformed header"},
		{"hex dim", dict("'<f4'", "False", "(0x2, 3)"), format, "malformed header"},
		{"leading zero", dict("'<f4'", "False", "(02, 3)"), format, "leading zero"},
		{"deep nesting", hdr(strings.Repeat("(", 60000)), format, "nested"},
		{"missing shape", hdr("{'descr': '<f4', 'fortran_order': False}"), format, "no 'shape' key"},
		{"missing descr", hdr("{'fortran_order': False, 'shape': (2,)}"), format, "no 'descr' key"},
		{"missing fortran_order", hdr("{'descr': '<f4', 'shape': (2,)}"), format, "no 'fortran_order' key"},
		{"extra key", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), format, "unexpected key 'x'"},
		{"repeated key", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}"), format, "repeats"},
		{"escaped descr", dict(`'<f4\n'`, "False", "(2,)"), unsupported, `dtype "<f4\n"`},
		{"unknown escape", dict(`'\x3cf4'`, "False", "(2,)"), format, "unsupported escape"},
		{"newline in string", dict("'<f4\n'", "False", "(2,)"), format, "newline in a string"},
		{"backslash at end", npyBytes(1, `{'descr': '<f4\`, nil), format, "unterminated string"},
		{"escaped quote key", hdr(`{'descr': '<f4', 'fortran_order': False, 'sh\'ape': (2,)}`), format, `unexpected key 'sh\'ape'`},
		{"double-quoted key", hdr(`{"descr": "<f4", "fortran_order": False, "shape": (2,), "sha\"pe": 1}`), format, "unexpected key"},
		{"integer key", hdr("{1: '<f4', 'fortran_order': False, 'shape': (2,)}"), format, "not a string"},
		{"shape int", dict("'<f4'", "False", "6"), format, "not a tuple"},
		{"shape in parens", dict("'<f4'", "False", "(6)"), format, "not a tuple"},
		{"shape list", dict("'<f4'", "False", "[2, 3]"), format, "not a tuple"},
		{"shape string", dict("'<f4'", "False", "'2,3'"), format, "not a tuple"},
		{"negative dim", dict("'<f4'", "False", "(2, -3)"), format, "negative length -3"},
		{"string dim", dict("'<f4'", "False", "(2, '3')"), format, "non-integer length '3'"},
		{"bool dim", dict("'<f4'", "False", "(True, 3)"), format, "non-integer length True"},
		{"None dim", dict("'<f4'", "False", "(None,)"), format, "non-integer"},
		{"huge dim", dict("'<f4'", "False", "(99999999999999999999999,)"), unsupported, "too large"},
		{"10^15 elements", dict("'<f4'", "False", "(1000000000000000,)"), unsupported, "more than 1099511627776 elements"},
		{"overflowing product", dict("'<u1'", "False", "(4294967296, 4294967296, 4294967296)"), unsupported, "more than"},
		{"fortran_order int", dict("'<f4'", "1", "(2,)"), format, "not True or False"},
		{"fortran_order string", dict("'<f4'", "'False'", "(2,)"), format, "not True or False"},
		{"descr int", dict("4", "False", "(2,)"), format, "not a dtype descriptor"},
		{"descr empty", dict("''", "False", "(2,)"), unsupported, `dtype ""`},
		{"descr name", dict("'float32'", "False", "(2,)"), unsupported, `"float32"`},
		{"descr f3", dict("'<f3'", "False", "(2,)"), unsupported, "float24"},
		{"descr f04", dict("'<f04'", "False", "(2,)"), unsupported, "not a NumPy type string"},
		{"descr f+4", dict("'<f+4'", "False", "(2,)"), unsupported, "not a NumPy type string"},
		{"descr f4 space", dict("'<f4 '", "False", "(2,)"), unsupported, "not a NumPy type string"},
		{"complex256", dict("'<c32'", "False", "(2,)"), unsupported, `dtype "<c32" (complex256)`},
		{"complex32", dict("'<c4'", "False", "(2,)"), unsupported, "complex32"},
		{"bool", dict("'|b1'", "False", "(2,)"), unsupported, "bool"},
		{"object", dict("'|O'", "False", "(2,)"), unsupported, "Python objects"},
		{"unicode", dict("'<U4'", "False", "(2,)"), unsupported, "Unicode string"},
		{"bytes", dict("'|S4'", "False", "(2,)"), unsupported, "byte string"},
		{"longdouble", dict("'<f16'", "False", "(2,)"), unsupported, "float128"},
		{"datetime", dict("'<M8[ns]'", "False", "(2,)"), unsupported, "datetime64"},
		{"structured", dict("[('x', '<f4'), ('y', '<i2')]", "False", "(2,)"), unsupported, "structured"},
		{"subarray", dict("('<f4', (2,))", "False", "(2,)"), unsupported, "subarray"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(c.in), onlyReader{bytes.NewReader(c.in)}} {
				a, err := ReadNPY(r)
				if err == nil {
					t.Fatalf("read %v %v, want an error", a.Shape, a.DType())
				}
				switch c.kind {
				case format:
					var fe *FormatError
					if !errors.As(err, &fe) {
						t.Fatalf("%v (%T), want a *FormatError", err, err)
					}
				case unsupported:
					var ue *UnsupportedError
					if !errors.As(err, &ue) {
						t.Fatalf("%v (%T), want an *UnsupportedError", err, err)
					}
				}
				if !strings.HasPrefix(err.Error(), "imageio: ") || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("error %q does not say %q", err, c.msg)
				}
			}
		})
	}
}

func TestReadNPYTruncationIsUnexpectedEOF(t *testing.T) {
	valid := npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", make([]byte, 24))
	for n := range len(valid) {
		_, err := ReadNPY(onlyReader{bytes.NewReader(valid[:n])})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(valid), err)
		}
		_, err = ReadNPY(bytes.NewReader(valid[:n]))
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("%d of %d bytes: %v, want a *FormatError", n, len(valid), err)
		}
	}
}

// TestReadNPYHugeClaim checks that a header claiming far more data than
// the file has is refused without allocating the claimed size.
func TestReadNPYHugeClaim(t *testing.T) {
	// 2^33 float64 = 64 GiB, within nd.MaxElements; the file has 1 MiB.
	file := npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (8589934592,), }\n", make([]byte, 1<<20))
	cases := []struct {
		name string
		r    func() io.Reader
		msg  string
	}{
		{"known size", func() io.Reader { return bytes.NewReader(file) }, "header claims 68719476736 bytes of data, the file has 1048576"},
		{"unknown size", func() io.Reader { return onlyReader{bytes.NewReader(file)} }, "truncated data"},
		{"10^15 elements", func() io.Reader {
			return onlyReader{bytes.NewReader(npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }", nil))}
		}, "more than"},
		// 2^35 elements: a shape a map may stream (nd.MaxShapeElements),
		// more than memory may hold (nd.MaxElements).
		{"2^35 elements into memory", func() io.Reader {
			return onlyReader{bytes.NewReader(npyBytes(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (34359738368,), }", nil))}
		}, "more than 17179869184 elements to read into memory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := ReadNPY(c.r())
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("%v, want an error saying %q", err, c.msg)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Fatalf("allocated %d bytes for a 1 MiB file", alloc)
			}
		})
	}
	// An io.Seeker without Len.
	sr := io.NewSectionReader(bytes.NewReader(file), 0, int64(len(file)))
	if _, err := ReadNPY(sr); err == nil || !strings.Contains(err.Error(), "the file has 1048576") {
		t.Fatalf("ReadNPY(*io.SectionReader): %v", err)
	}
	// A file of its own size, known from the file system.
	path := filepath.Join(t.TempDir(), "huge.npy")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNPYFile(path); err == nil || !strings.Contains(err.Error(), "the file has 1048576") {
		t.Fatalf("ReadNPYFile: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadNPY(f); err == nil || !strings.Contains(err.Error(), "the file has 1048576") {
		t.Fatalf("ReadNPY(*os.File): %v", err)
	}
}

// TestReadNPYStream checks that ReadNPY stops at the end of the data, so
// arrays written one after another are read one after another, and that
// trailing bytes are not an error.
func TestReadNPYStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	var arrays []nd.Array
	for _, dt := range nd.DTypes {
		a := randArray(t, rng, dt, []int{2, 3})
		arrays = append(arrays, a)
		if err := WriteNPY(&buf, a); err != nil {
			t.Fatal(err)
		}
	}
	buf.WriteString("trailing bytes")
	for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), onlyReader{bytes.NewReader(buf.Bytes())}} {
		for i, want := range arrays {
			got, err := ReadNPY(r)
			if err != nil || !sameArray(got, want) {
				t.Fatalf("array %d: %v", i, err)
			}
		}
		rest, _ := io.ReadAll(r)
		if string(rest) != "trailing bytes" {
			t.Fatalf("left %q unread", rest)
		}
	}
}

// TestReadNPYPipe reads from an *os.File that cannot seek.
func TestReadNPYPipe(t *testing.T) {
	a, _ := nd.FromSlice([]uint16{1, 2, 65535}, 3)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		WriteNPY(pw, a)
		pw.Close()
	}()
	b, err := ReadNPY(pr)
	if err != nil || !sameArray(a, b) {
		t.Fatalf("pipe: %v", err)
	}
}

type failingReader struct{ n int }

var errDisk = errors.New("disk on fire")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errDisk
	}
	p = p[:min(len(p), f.n)]
	for i := range p {
		p[i] = npyMagic[0]
	}
	f.n -= len(p)
	return len(p), nil
}

func TestNPYErrorsWrapped(t *testing.T) {
	a, _ := nd.FromSlice([]float64{1, 2, 3}, 3)
	var buf bytes.Buffer
	if err := WriteNPY(&buf, a); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	for n := 0; n < len(file); n += 7 {
		r := io.MultiReader(bytes.NewReader(file[:n]), &failingReader{})
		if _, err := ReadNPY(r); !errors.Is(err, errDisk) || !strings.HasPrefix(err.Error(), "imageio: ") {
			t.Fatalf("after %d bytes: %v, want it to wrap errDisk", n, err)
		}
	}
	for n := 0; n < len(file); n += 5 {
		w := &limitedWriter{n: n}
		if err := WriteNPY(w, a); !errors.Is(err, errDisk) {
			t.Fatalf("after %d bytes: %v, want it to wrap errDisk", n, err)
		}
	}
	bad := nd.Array{Shape: []int{2, 2}, Data: []float32{1, 2, 3}}
	var ae *nd.ArgumentError
	if err := WriteNPY(io.Discard, bad); !errors.As(err, &ae) {
		t.Fatalf("inconsistent array: %v", err)
	}
	var ue *nd.UnsupportedError
	if err := WriteNPY(io.Discard, nd.Array{Shape: []int{2}, Data: []bool{true, false}}); !errors.As(err, &ue) {
		t.Fatalf("[]bool data: %v", err)
	}
}

type limitedWriter struct{ n int }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDisk
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteNPYFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npy")
	a, _ := nd.FromSlice([]int16{-1, 2, -3, 4}, 2, 2)
	if err := WriteNPYFile(path, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadNPYFile(path)
	if err != nil || !sameArray(a, b) {
		t.Fatalf("read back: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	// A replaced file keeps its mode.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPYFile(path, a); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced file has mode %v", fi.Mode())
	}

	// Failures leave nothing behind and keep an existing target.
	if err := WriteNPYFile(path, nd.Array{Shape: []int{3}, Data: []int16{1}}); err == nil {
		t.Fatal("inconsistent array written")
	}
	if err := WriteNPYFile(filepath.Join(dir, "missing", "x.npy"), a); err == nil {
		t.Fatal("wrote into a missing directory")
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPYFile(sub, a); err == nil {
		t.Fatal("replaced a non-empty directory")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"adir", "out.npy"}) {
		t.Fatalf("directory holds %v", names)
	}
	if b, err := ReadNPYFile(path); err != nil || !sameArray(a, b) {
		t.Fatalf("target damaged: %v", err)
	}
	if _, err := ReadNPYFile(filepath.Join(dir, "nope.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}

	// A relative path in the current directory.
	t.Chdir(dir)
	if err := WriteNPYFile("rel.npy", a); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadNPYFile("rel.npy"); err != nil || !sameArray(a, b) {
		t.Fatalf("relative path: %v", err)
	}
}

// TestReadNPYLarge reads an array spanning many chunks both ways, with an
// odd element count so the last chunk is partial.
func TestReadNPYLarge(t *testing.T) {
	n := 3*npyChunk/4 + 12345
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dt := range []nd.DType{nd.Uint8, nd.Float32, nd.Float64} {
		a := randArray(t, rng, dt, []int{n})
		var buf bytes.Buffer
		if err := WriteNPY(&buf, a); err != nil {
			t.Fatal(err)
		}
		b, err := readAllWays(t, buf.Bytes())
		if err != nil || !sameArray(a, b) {
			t.Fatalf("%v: %v", dt, err)
		}
	}
}

func BenchmarkReadNPYFloat32(b *testing.B) {
	const n = 16 << 20 // 64 MiB
	a, _ := nd.New(nd.Float32, n)
	var buf bytes.Buffer
	if err := WriteNPY(&buf, a); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := ReadNPY(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteNPYFloat32(b *testing.B) {
	const n = 16 << 20
	a, _ := nd.New(nd.Float32, n)
	b.SetBytes(4 * n)
	for b.Loop() {
		if err := WriteNPY(io.Discard, a); err != nil {
			b.Fatal(err)
		}
	}
}
