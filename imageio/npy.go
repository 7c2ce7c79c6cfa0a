package imageio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
	"github.com/ndconv/ndconv/nd"
)

// The .npy format (numpy/lib/format.py, NEP 1): the magic string
// "\x93NUMPY", a major and a minor version byte, the header length as a
// little-endian uint16 (version 1.0) or uint32 (2.0, 3.0), and a header
// that is a Python dict literal with the keys 'descr', 'fortran_order' and
// 'shape', padded with spaces and a '\n'. The data follow in the header's
// element type and byte order, C or Fortran order.
const (
	npyMagic = "\x93NUMPY"

	// npyMaxHeader bounds the header of a version 2.0 or 3.0 file (version
	// 1.0 headers are at most 65535 bytes). numpy itself refuses headers
	// over 10000 bytes unless told otherwise.
	npyMaxHeader = 1 << 20

	// npyMaxRank bounds the number of axes in a header (numpy 2 allows 64).
	npyMaxRank = 64

	// npyAlign is the alignment of the data that numpy ≥ 1.23 writes.
	npyAlign = 64

	// npyGrowthDigits is the room numpy leaves in a header so that the
	// length of the first axis can grow in place.
	npyGrowthDigits = 21

	// npyChunk is the number of bytes read or converted at a time.
	npyChunk = 1 << 20
)

// npyHeader is a parsed and validated header.
type npyHeader struct {
	dtype   nd.DType
	big     bool // data are big-endian
	fortran bool
	shape   []int
	n       int   // elements
	nbytes  int64 // bytes of data
}

// ReadNPY reads one array in NumPy's .npy format (versions 1.0, 2.0 and 3.0)
// from r. Element types uint8, int8, uint16, int16, uint32, int32,
// uint64, int64, float16, float32 and float64 are read in either byte
// order, as the array's own dtype; any other element type is an
// *UnsupportedError that names it. Fortran-order data are transposed to C
// order. A 0-d array (shape ()) is returned with an empty Shape and one
// element.
//
// ReadNPY reads exactly the header and the data, never beyond, so several
// arrays written one after another to one stream are read by calling it
// repeatedly; bytes after the data are left unread and not an error (as
// numpy.load ignores them).
//
// If r reports how much it holds (a Len method, as *bytes.Reader has, or an
// io.Seeker such as a regular *os.File), a header that claims more data
// than remain is refused before anything is allocated. Otherwise the data
// are read in bounded chunks, so a truncated stream fails with a
// *FormatError after allocating about what it held, not what it claimed.
func ReadNPY(r io.Reader) (nd.Array, error) {
	remain, known, err := fileio.Remaining(r)
	if err != nil {
		return nd.Array{}, err
	}
	return readNPY(r, remain, known)
}

// ReadNPYFile reads the .npy file at path with ReadNPY, checking the
// header against the size of the file.
func ReadNPYFile(path string) (nd.Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, err
	}
	defer f.Close()
	remain, known := int64(0), false
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		remain, known = fi.Size(), true
	}
	return readNPY(f, remain, known)
}

// readFull is io.ReadFull that turns an early end into a *FormatError
// saying what was being read; other errors of r are wrapped.
func readFull(r io.Reader, b []byte, what string) (int, error) {
	n, err := io.ReadFull(r, b)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return n, npyFormatError(io.ErrUnexpectedEOF, "truncated %s", what)
	default:
		return n, fmt.Errorf("imageio: reading .npy %s: %w", what, err)
	}
}

func readNPY(r io.Reader, remain int64, known bool) (nd.Array, error) {
	h, err := readNPYHeader(r, &remain, known)
	if err != nil {
		return nd.Array{}, err
	}
	if known && h.nbytes > remain {
		return nd.Array{}, npyFormatError(nil, "header claims %d bytes of data, the file has %d", h.nbytes, remain)
	}
	data, err := readNPYData(r, h, known)
	if err != nil {
		return nd.Array{}, err
	}
	if h.fortran {
		data = fortranToC(data, h.shape)
	}
	return nd.Array{Shape: h.shape, Data: data}, nil
}

// readNPYHeader reads and validates the magic, version and header,
// subtracting what it reads from *remain.
func readNPYHeader(r io.Reader, remain *int64, known bool) (npyHeader, error) {
	var pre [12]byte
	n, err := io.ReadFull(r, pre[:8])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return npyHeader{}, fmt.Errorf("imageio: reading .npy magic string: %w", err)
	}
	if n == 0 {
		return npyHeader{}, npyFormatError(io.ErrUnexpectedEOF, "empty file")
	}
	if m := min(n, len(npyMagic)); string(pre[:m]) != npyMagic[:m] {
		return npyHeader{}, npyFormatError(nil, "not a .npy file (starts with %q, not %q)", pre[:m], npyMagic)
	}
	if n < len(npyMagic) {
		return npyHeader{}, npyFormatError(io.ErrUnexpectedEOF, "truncated magic string")
	}
	if n < 8 {
		return npyHeader{}, npyFormatError(io.ErrUnexpectedEOF, "truncated version")
	}
	major, minor := pre[6], pre[7]
	lenSize := 0
	switch {
	case major == 1 && minor == 0:
		lenSize = 2
	case (major == 2 || major == 3) && minor == 0:
		lenSize = 4
	default:
		return npyHeader{}, &UnsupportedError{Format: ".npy", What: "format version",
			Value: fmt.Sprintf("%d.%d", major, minor), Detail: "ndconv reads 1.0, 2.0 and 3.0"}
	}
	if _, err := readFull(r, pre[8:8+lenSize], "header length"); err != nil {
		return npyHeader{}, err
	}
	var hlen int64
	if lenSize == 2 {
		hlen = int64(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		hlen = int64(binary.LittleEndian.Uint32(pre[8:]))
	}
	*remain -= int64(8 + lenSize)
	if hlen > npyMaxHeader {
		return npyHeader{}, npyFormatError(nil, "header length %d exceeds the limit of %d bytes", hlen, npyMaxHeader)
	}
	if known && hlen > *remain {
		return npyHeader{}, npyFormatError(io.ErrUnexpectedEOF, "header length %d exceeds the file (%d bytes after the header length)", hlen, max(*remain, 0))
	}
	hdr := make([]byte, hlen)
	if _, err := readFull(r, hdr, "header"); err != nil {
		return npyHeader{}, err
	}
	*remain -= hlen
	return parseNPYHeader(hdr)
}

// parseNPYHeader interprets the header dict.
func parseNPYHeader(hdr []byte) (npyHeader, error) {
	var h npyHeader
	v, err := parsePyLiteral(hdr)
	if err != nil {
		return h, npyFormatError(nil, "malformed header: %v", err)
	}
	if v.kind != pyDict {
		return h, npyFormatError(nil, "header is a %s, not a dict", v.kind)
	}
	var descr, fortran, shape *pyValue
	for i := 0; i < len(v.items); i += 2 {
		k := &v.items[i]
		if k.kind != pyStr {
			return h, npyFormatError(nil, "header has a key %s that is not a string", k.text)
		}
		var dst **pyValue
		switch k.str {
		case "descr":
			dst = &descr
		case "fortran_order":
			dst = &fortran
		case "shape":
			dst = &shape
		default:
			return h, npyFormatError(nil, "header has an unexpected key %s", k.text)
		}
		if *dst != nil {
			return h, npyFormatError(nil, "header repeats the key %s", k.text)
		}
		*dst = &v.items[i+1]
	}
	for _, m := range []struct {
		v    *pyValue
		name string
	}{{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}} {
		if m.v == nil {
			return h, npyFormatError(nil, "header has no '%s' key", m.name)
		}
	}

	switch descr.kind {
	case pyStr:
		if h.dtype, h.big, err = parseDescr(descr.str); err != nil {
			return h, err
		}
	case pyList:
		return h, &UnsupportedError{Format: ".npy", What: "dtype", Value: descr.text, Detail: "structured dtype"}
	case pyTuple:
		return h, &UnsupportedError{Format: ".npy", What: "dtype", Value: descr.text, Detail: "subarray dtype"}
	default:
		return h, npyFormatError(nil, "descr %s is not a dtype descriptor", descr.text)
	}

	if fortran.kind != pyBool {
		return h, npyFormatError(nil, "fortran_order %s is not True or False", fortran.text)
	}
	h.fortran = fortran.b

	if shape.kind != pyTuple {
		return h, npyFormatError(nil, "shape %s is not a tuple", shape.text)
	}
	if len(shape.items) > npyMaxRank {
		return h, npyFormatError(nil, "shape has %d axes, more than %d", len(shape.items), npyMaxRank)
	}
	h.shape = make([]int, len(shape.items))
	for i, d := range shape.items {
		switch {
		case d.kind != pyInt:
			return h, npyFormatError(nil, "shape %s has a non-integer length %s", shape.text, d.text)
		case d.num < 0:
			return h, npyFormatError(nil, "shape %s has a negative length %s", shape.text, d.text)
		case d.big || d.num > math.MaxInt:
			return h, &UnsupportedError{Format: ".npy", What: "shape", Value: shape.text, Detail: fmt.Sprintf("length %s is too large", d.text)}
		}
		h.shape[i] = int(d.num)
	}
	// A header describes data that may be mapped and streamed; reading it
	// into memory (readNPYData) bounds it by nd.MaxElements.
	if h.n, err = nd.ShapeElements(h.shape); err != nil {
		return h, &UnsupportedError{Format: ".npy", What: "shape", Value: shape.text,
			Detail: fmt.Sprintf("more than %d elements", nd.MaxShapeElements)}
	}
	// n ≤ nd.MaxShapeElements and the size ≤ 16, so this cannot overflow.
	h.nbytes = int64(h.n) * int64(h.dtype.Size())
	return h, nil
}

// parseDescr maps a NumPy type string such as "<f4" to a DType and its byte
// order.
func parseDescr(s string) (dt nd.DType, big bool, err error) {
	t := s
	order := byte('=')
	if t != "" && strings.IndexByte("<>|=", t[0]) >= 0 {
		order, t = t[0], t[1:]
	}
	if t == "" {
		return 0, false, &UnsupportedError{Format: ".npy", What: "dtype", Value: s, Detail: "not a NumPy type string"}
	}
	kind, rest := t[0], t[1:]
	size, serr := strconv.Atoi(rest)
	if serr != nil || size <= 0 || rest[0] == '+' || rest[0] == '0' {
		size = 0
	}
	switch {
	case kind == 'u' && size == 1:
		dt = nd.Uint8
	case kind == 'u' && size == 2:
		dt = nd.Uint16
	case kind == 'i' && size == 2:
		dt = nd.Int16
	case kind == 'i' && size == 4:
		dt = nd.Int32
	case kind == 'f' && size == 4:
		dt = nd.Float32
	case kind == 'f' && size == 8:
		dt = nd.Float64
	case kind == 'i' && size == 1:
		dt = nd.Int8
	case kind == 'u' && size == 4:
		dt = nd.Uint32
	case kind == 'i' && size == 8:
		dt = nd.Int64
	case kind == 'u' && size == 8:
		dt = nd.Uint64
	case kind == 'f' && size == 2:
		dt = nd.Float16
	case kind == 'c' && size == 8:
		dt = nd.Complex64
	case kind == 'c' && size == 16:
		dt = nd.Complex128
	default:
		return 0, false, &UnsupportedError{Format: ".npy", What: "dtype", Value: s, Detail: describeDescr(kind, size)}
	}
	// '|' (not applicable) and '=' (native) mean little-endian on the
	// platforms ndconv runs on; numpy writes '<' or '>' for every
	// multi-byte type.
	return dt, order == '>' && size > 1, nil
}

// describeDescr names an unsupported type in words.
func describeDescr(kind byte, size int) string {
	bits := func(name string) string {
		if size == 0 {
			return "not a NumPy type string"
		}
		return name + strconv.Itoa(8*size)
	}
	switch kind {
	case 'b':
		return "bool"
	case 'i':
		return bits("int")
	case 'u':
		return bits("uint")
	case 'f':
		return bits("float")
	case 'c':
		return bits("complex")
	case 'O':
		return "Python objects"
	case 'S', 'a':
		return "byte string"
	case 'U':
		return "Unicode string"
	case 'V':
		return "raw bytes (void)"
	case 'M':
		return "datetime64"
	case 'm':
		return "timedelta64"
	}
	return "not a NumPy type string"
}

// readNPYData reads h.n elements into memory, at most nd.MaxElements.
func readNPYData(r io.Reader, h npyHeader, known bool) (any, error) {
	if h.n > nd.MaxElements {
		return nil, &UnsupportedError{Format: ".npy", What: "shape", Value: fmt.Sprint(h.shape),
			Detail: fmt.Sprintf("more than %d elements to read into memory (a .npy or .raw output streams it from a map)", nd.MaxElements)}
	}
	size := h.dtype.Size()
	var buf []byte
	if h.dtype != nd.Uint8 {
		buf = make([]byte, min(int64(npyChunk), h.nbytes))
	}
	var data any
	var got int64
	var err error
	switch h.dtype {
	case nd.Uint8:
		data, got, err = readElems(r, h.n, 1, known, buf, func(d []uint8, b []byte) {})
	case nd.Uint16:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[uint16](decodeU16, h.big, size))
	case nd.Int16:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[int16](decodeI16, h.big, size))
	case nd.Int32:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[int32](decodeI32, h.big, size))
	case nd.Float32:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[float32](decodeF32, h.big, size))
	case nd.Float64:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[float64](decodeF64, h.big, size))
	case nd.Int8:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[int8](decodeBinary, h.big, size))
	case nd.Uint32:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[uint32](decodeBinary, h.big, size))
	case nd.Int64:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[int64](decodeBinary, h.big, size))
	case nd.Uint64:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[uint64](decodeBinary, h.big, size))
	case nd.Float16:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[nd.Half](decodeBinary, h.big, size))
	case nd.Complex64: // each part in the file's byte order, real part first
		data, got, err = readElems(r, h.n, size, known, buf, decoder[complex64](decodeBinary, h.big, size))
	case nd.Complex128:
		data, got, err = readElems(r, h.n, size, known, buf, decoder[complex128](decodeBinary, h.big, size))
	}
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, npyFormatError(io.ErrUnexpectedEOF, "truncated data: header claims %d bytes, the stream ended after %d", h.nbytes, got)
	default:
		return nil, fmt.Errorf("imageio: reading .npy data: %w", err)
	}
}

// readElems reads n elements of size bytes from r, at most npyChunk bytes at
// a time: into buf, then decoded into the result with dec; for size 1 (buf
// nil) directly into the result. If the size of the source is not known,
// the result grows as data arrive, so a stream that ends early costs about
// what it held, not what its header claimed. It returns the number of bytes
// read.
func readElems[T any](r io.Reader, n, size int, known bool, buf []byte, dec func([]T, []byte)) ([]T, int64, error) {
	step := npyChunk / size
	var dst []T
	if known {
		dst = make([]T, n)
	} else {
		dst = make([]T, 0, min(n, step))
	}
	var got int64
	for off := 0; off < n; off += step {
		m := min(step, n-off)
		if !known {
			if off+m > cap(dst) {
				grown := make([]T, off, min(n, max(2*cap(dst), off+m)))
				copy(grown, dst)
				dst = grown
			}
			dst = dst[:off+m]
		}
		d := dst[off : off+m]
		var k int
		var err error
		if buf == nil {
			k, err = io.ReadFull(r, any(d).([]byte))
		} else {
			k, err = io.ReadFull(r, buf[:m*size])
		}
		got += int64(k)
		if err != nil {
			return nil, got, err
		}
		if buf != nil {
			dec(d, buf[:m*size])
		}
	}
	return dst, got, nil
}

// decoder returns dec for data in the other byte order and, for data in
// the machine's, a plain copy: no per-element decoding. Reading through a
// buffer that stays in cache and copying is faster than reading straight
// into fresh memory (the system then faults its pages in one by one).
func decoder[T any](dec func([]T, []byte, bool), big bool, size int) func([]T, []byte) {
	if big == nativeBigEndian {
		return func(d []T, b []byte) { copy(rawBytes(d, size), b) }
	}
	return func(d []T, b []byte) { dec(d, b, big) }
}

// nativeBigEndian reports the machine's byte order: data in it are read
// and written as they are, with no per-element decoding.
var nativeBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// rawBytes views elements of size bytes as their bytes in memory.
func rawBytes[T any](d []T, size int) []byte {
	if len(d) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), len(d)*size)
}

func decodeU16(d []uint16, b []byte, big bool) {
	b = b[:2*len(d)]
	if big {
		for i := range d {
			d[i] = binary.BigEndian.Uint16(b[2*i:])
		}
		return
	}
	for i := range d {
		d[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
}

func decodeI16(d []int16, b []byte, big bool) {
	b = b[:2*len(d)]
	if big {
		for i := range d {
			d[i] = int16(binary.BigEndian.Uint16(b[2*i:]))
		}
		return
	}
	for i := range d {
		d[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
}

func decodeI32(d []int32, b []byte, big bool) {
	b = b[:4*len(d)]
	if big {
		for i := range d {
			d[i] = int32(binary.BigEndian.Uint32(b[4*i:]))
		}
		return
	}
	for i := range d {
		d[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func decodeF32(d []float32, b []byte, big bool) {
	b = b[:4*len(d)]
	if big {
		for i := range d {
			d[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
		}
		return
	}
	for i := range d {
		d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func decodeF64(d []float64, b []byte, big bool) {
	b = b[:8*len(d)]
	if big {
		for i := range d {
			d[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
		return
	}
	for i := range d {
		d[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// decodeBinary decodes len(d) fixed-size values from b in the given byte
// order.
func decodeBinary[T any](d []T, b []byte, big bool) {
	var order binary.ByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	binary.Decode(b[:len(d)*binary.Size(d[0])], order, d)
}

// fortranToC returns the C-order copy of data, which holds an array of the
// given shape in Fortran order (first axis fastest).
func fortranToC(data any, shape []int) any {
	switch d := data.(type) {
	case []uint8:
		return transposeF(d, shape)
	case []uint16:
		return transposeF(d, shape)
	case []int16:
		return transposeF(d, shape)
	case []int32:
		return transposeF(d, shape)
	case []float32:
		return transposeF(d, shape)
	case []float64:
		return transposeF(d, shape)
	case []int8:
		return transposeF(d, shape)
	case []uint32:
		return transposeF(d, shape)
	case []int64:
		return transposeF(d, shape)
	case []uint64:
		return transposeF(d, shape)
	case []nd.Half:
		return transposeF(d, shape)
	case []complex64:
		return transposeF(d, shape)
	case []complex128:
		return transposeF(d, shape)
	}
	return data
}

func transposeF[T any](src []T, shape []int) []T {
	rank := len(shape)
	if rank < 2 || len(src) == 0 {
		return src
	}
	fs := make([]int, rank) // Fortran strides
	s := 1
	for k := range shape {
		fs[k] = s
		s *= shape[k]
	}
	dst := make([]T, len(src))
	idx := make([]int, rank)
	inner, istride := shape[rank-1], fs[rank-1]
	base := 0
	for o := 0; o < len(dst); o += inner {
		p := base
		for j := range inner {
			dst[o+j] = src[p]
			p += istride
		}
		for k := rank - 2; k >= 0; k-- {
			idx[k]++
			base += fs[k]
			if idx[k] < shape[k] {
				break
			}
			base -= idx[k] * fs[k]
			idx[k] = 0
		}
	}
	return dst
}

// npyDescr is the type string WriteNPY writes for each DType.
var npyDescr = map[nd.DType]string{
	nd.Uint8:      "|u1",
	nd.Uint16:     "<u2",
	nd.Int16:      "<i2",
	nd.Int32:      "<i4",
	nd.Float32:    "<f4",
	nd.Float64:    "<f8",
	nd.Int8:       "|i1",
	nd.Uint32:     "<u4",
	nd.Int64:      "<i8",
	nd.Uint64:     "<u8",
	nd.Float16:    "<f2",
	nd.Complex64:  "<c8",
	nd.Complex128: "<c16",
}

// npyHeaderBytes returns the magic, version, length and header for an
// array, as numpy ≥ 1.23 writes them: version 1.0 unless the header needs
// more than 65535 bytes, the keys sorted, room for the first axis to grow
// to 21 digits, padded with spaces and a '\n' to a multiple of 64 bytes.
func npyHeaderBytes(descr string, fortran bool, shape []int) []byte {
	var sb strings.Builder
	sb.WriteString("{'descr': '")
	sb.WriteString(descr)
	sb.WriteString("', 'fortran_order': ")
	if fortran {
		sb.WriteString("True")
	} else {
		sb.WriteString("False")
	}
	sb.WriteString(", 'shape': (")
	for i, s := range shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sb.WriteString(",")
	}
	sb.WriteString("), }")
	if len(shape) > 0 {
		grow := shape[0]
		if fortran {
			grow = shape[len(shape)-1]
		}
		sb.WriteString(strings.Repeat(" ", max(0, npyGrowthDigits-len(strconv.Itoa(grow)))))
	}
	header := sb.String()
	hlen := len(header) + 1 // the '\n'
	major, lenSize := byte(1), 2
	pad := npyAlign - (len(npyMagic)+2+lenSize+hlen)%npyAlign
	if hlen+pad > math.MaxUint16 {
		major, lenSize = 2, 4
		pad = npyAlign - (len(npyMagic)+2+lenSize+hlen)%npyAlign
	}
	out := make([]byte, 0, len(npyMagic)+2+lenSize+hlen+pad)
	out = append(out, npyMagic...)
	out = append(out, major, 0)
	if lenSize == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, header...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

// WriteNPY writes a to w in NumPy's .npy format, as numpy.save would: format
// version 1.0 (2.0 if the header does not fit in 65535 bytes), a
// little-endian type string, C order, the header padded so that the data
// start at a multiple of 64 bytes. Arrays of any rank, including 0-d arrays
// (an empty Shape with one element), are written. Errors of w are wrapped.
func WriteNPY(w io.Writer, a nd.Array) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("imageio: writing .npy: %w", err)
	}
	dt := a.DType()
	if _, err := w.Write(npyHeaderBytes(npyDescr[dt], false, a.Shape)); err != nil {
		return fmt.Errorf("imageio: writing .npy header: %w", err)
	}
	if err := writeLittleEndian(w, a.Data); err != nil {
		return fmt.Errorf("imageio: writing .npy data: %w", err)
	}
	return nil
}

// writeLittleEndian writes an Array's data as little-endian values, the
// layout of .npy and .raw files.
func writeLittleEndian(w io.Writer, data any) error {
	if b := (nd.Array{Data: data}).Bytes(); b != nil && !nativeBigEndian {
		// Already little-endian: written as it is, through a buffer that
		// stays in cache (the system's copy from it is faster than from
		// the array's memory).
		buf := make([]byte, min(len(b), npyChunk))
		for len(b) > 0 {
			n := copy(buf, b)
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	var err error
	switch d := data.(type) {
	case []uint8:
		_, err = w.Write(d)
	case []uint16:
		err = writeElems(w, d, 2, func(b []byte, d []uint16) {
			for i, v := range d {
				binary.LittleEndian.PutUint16(b[2*i:], v)
			}
		})
	case []int16:
		err = writeElems(w, d, 2, func(b []byte, d []int16) {
			for i, v := range d {
				binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
			}
		})
	case []int32:
		err = writeElems(w, d, 4, func(b []byte, d []int32) {
			for i, v := range d {
				binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
			}
		})
	case []float32:
		err = writeElems(w, d, 4, func(b []byte, d []float32) {
			for i, v := range d {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
		})
	case []float64:
		err = writeElems(w, d, 8, func(b []byte, d []float64) {
			for i, v := range d {
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
			}
		})
	case []int8:
		err = writeElems(w, d, 1, encodeBinary[int8])
	case []uint32:
		err = writeElems(w, d, 4, encodeBinary[uint32])
	case []int64:
		err = writeElems(w, d, 8, encodeBinary[int64])
	case []uint64:
		err = writeElems(w, d, 8, encodeBinary[uint64])
	case []nd.Half:
		err = writeElems(w, d, 2, encodeBinary[nd.Half])
	case []complex64:
		err = writeElems(w, d, 8, encodeBinary[complex64])
	case []complex128:
		err = writeElems(w, d, 16, encodeBinary[complex128])
	}
	return err
}

// encodeBinary encodes d little-endian into b.
func encodeBinary[T any](b []byte, d []T) { binary.Encode(b, binary.LittleEndian, d) }

// writeElems encodes data into a bounded buffer with enc and writes it.
func writeElems[T any](w io.Writer, data []T, size int, enc func([]byte, []T)) error {
	step := npyChunk / size
	buf := make([]byte, min(len(data), step)*size)
	for off := 0; off < len(data); off += step {
		d := data[off:min(off+step, len(data))]
		b := buf[:len(d)*size]
		enc(b, d)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// WriteNPYFile writes a to the file at path with WriteNPY. It writes to a
// temporary file in the same directory and renames it to path, so readers
// never see a partial file and a failed write leaves nothing behind. A new
// file gets permissions 0644; a file that is replaced keeps its
// permission bits.
func WriteNPYFile(path string, a nd.Array) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error { return WriteNPY(w, a) })
}
