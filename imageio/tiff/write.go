package tiff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"

	"github.com/klauspost/compress/zlib"

	"github.com/ndconv/ndconv/nd"
)

// Compression is the scheme Write compresses strips with.
type Compression uint8

const (
	None    Compression = iota // uncompressed (TIFF compression 1)
	Deflate                    // zlib, as TIFF compression 8 (Adobe Deflate)
	LZW                        // TIFF's LZW, compression 5
)

var compressionOptionNames = [...]string{"none", "deflate", "lzw"}

func (c Compression) String() string { return nd.EnumName(compressionOptionNames[:], c, "Compression") }

// ParseCompression accepts "none", "deflate" and "lzw", in any case.
func ParseCompression(s string) (Compression, error) {
	return nd.ParseEnum[Compression](compressionOptionNames[:], s, "TIFF compression")
}

// Options control how Write stores an image. The zero value writes
// uncompressed strips.
type Options struct {
	Compression Compression
	// Predictor stores each sample as its difference from the previous
	// sample of the same channel in the row, which often compresses
	// better: TIFF predictor 2 (horizontal differencing) for integers,
	// predictor 3 (libtiff's floating-point predictor) for floats. It
	// applies to Deflate and LZW, and is ignored without compression,
	// where TIFF readers do not expect it.
	Predictor bool
}

// stripTarget is the decoded size Write aims each strip at.
const stripTarget = 64 << 10

// maxClassicOffset is the largest offset a classic TIFF can hold.
const maxClassicOffset = math.MaxUint32

// Write writes img as a little-endian classic TIFF: one page for an H×W or
// H×W×C array, P pages for a P×H×W or P×H×W×C one. Channels 0 is written
// as MinIsBlack, 2 as MinIsBlack with an unassociated alpha sample, 3 as
// RGB and 4 as RGB with unassociated alpha; integer dtypes as unsigned or
// signed integers, float32 and float64 as IEEE floats. Each page is
// stored contiguously (PlanarConfiguration 1) in strips of about 64 KiB,
// with a resolution of 1 pixel per unit and no absolute unit.
//
// A file that would exceed the 4 GiB a classic TIFF can address is an
// *UnsupportedError; Write finds this out page by page, so earlier pages
// may have been written to w by then.
func Write(w io.Writer, img Image, opt Options) error {
	l, err := layoutFor(img, opt)
	if err != nil {
		return err
	}
	out := &positionWriter{w: w}
	header := []byte{'I', 'I', 42, 0, 8, 0, 0, 0}
	out.write(header)
	var enc pageEncoder
	for p := range l.pages {
		strips, counts, err := enc.encodePage(img.Array.Data, p, l)
		if err != nil {
			return err
		}
		fields := l.fields(counts)
		ifdStart := out.pos
		dataStart := ifdStart + ifdLength(fields)
		// Strip offsets, now that the data's place is known; each strip
		// starts at an even offset.
		i := slices.IndexFunc(fields, func(f field) bool { return f.tag == tagStripOffsets })
		end := dataStart
		for k, s := range strips {
			fields[i].values[k] = uint32(min(end, maxClassicOffset))
			end += uint64(len(s))
		}
		if end > maxClassicOffset {
			return &UnsupportedError{What: "file size", Value: strconv.FormatUint(end, 10) + " bytes",
				Detail: fmt.Sprintf("page %d ends beyond the 4 GiB a classic TIFF can address; BigTIFF writing is not supported", p)}
		}
		next := uint64(0)
		if p+1 < l.pages {
			next = end
		}
		out.write(serializeIFD(fields, ifdStart, next))
		for _, s := range strips {
			out.write(s)
		}
		if out.err != nil {
			return out.err
		}
	}
	return out.err
}

// positionWriter writes to w, remembering the position and the first
// error.
type positionWriter struct {
	w   io.Writer
	pos uint64
	err error
}

func (p *positionWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	n, err := p.w.Write(b)
	p.pos += uint64(n)
	p.err = err
}

// writeLayout is what Write derives from an Image before writing.
type writeLayout struct {
	pages, height, width, spp int
	dtype                     nd.DType
	format                    uint16 // sample format
	compression, predictor    uint16 // the TIFF tag values
	rowsPerStrip              int
}

func layoutFor(img Image, opt Options) (writeLayout, error) {
	a := img.Array
	if err := a.Check(); err != nil {
		return writeLayout{}, err
	}
	if a.DType().IsComplex() {
		return writeLayout{}, &UnsupportedError{What: "dtype", Value: a.DType().String(), Detail: "TIFF holds real samples; write complex arrays as .npy"}
	}
	shape := a.Shape
	l := writeLayout{pages: 1, spp: max(img.Channels, 1), dtype: a.DType()}
	switch {
	case img.Channels == 0 && (len(shape) == 2 || len(shape) == 3):
	case img.Channels >= 2 && img.Channels <= 4 && (len(shape) == 3 || len(shape) == 4) && shape[len(shape)-1] == img.Channels:
		shape = shape[:len(shape)-1]
	default:
		return writeLayout{}, &UnsupportedError{What: "image shape", Value: fmt.Sprint(a.Shape),
			Detail: fmt.Sprintf("with Channels %d: write H×W or P×H×W with Channels 0, or H×W×C or P×H×W×C with Channels C of 2 to 4", img.Channels)}
	}
	if len(shape) == 3 {
		l.pages, shape = shape[0], shape[1:]
	}
	l.height, l.width = shape[0], shape[1]
	if l.pages == 0 || l.height == 0 || l.width == 0 {
		return writeLayout{}, &UnsupportedError{What: "image shape", Value: fmt.Sprint(a.Shape), Detail: "a TIFF page cannot be empty"}
	}
	switch lo, _ := l.dtype.IntegerRange(); {
	case !l.dtype.IsInteger():
		l.format = sampleFormatFloat
	case lo < 0:
		l.format = sampleFormatInt
	default:
		l.format = sampleFormatUint
	}
	switch opt.Compression {
	case None:
		l.compression = compressionNone
	case Deflate:
		l.compression = compressionDeflate
	case LZW:
		l.compression = compressionLZW
	default:
		return writeLayout{}, &UnsupportedError{What: "compression option", Value: opt.Compression.String()}
	}
	l.predictor = predictorNone
	if opt.Predictor && opt.Compression != None {
		l.predictor = predictorHorizontal
		if l.format == sampleFormatFloat {
			l.predictor = predictorFloat
		}
	}
	l.rowsPerStrip = min(max(stripTarget/l.rowBytes(), 1), l.height)
	return l, nil
}

func (l writeLayout) rowBytes() int { return l.width * l.spp * l.dtype.Size() }

// field is one IFD entry to write: SHORT and LONG values one per element,
// RATIONAL values as numerator, denominator pairs.
type field struct {
	tag, typ uint16
	values   []uint32
}

// fields returns the IFD of a page whose strips have the given compressed
// sizes, with StripOffsets still to fill in; tags in ascending order, as
// TIFF requires.
func (l writeLayout) fields(counts []uint32) []field {
	short := func(tag uint16, v ...uint32) field { return field{tag, typeShort, v} }
	long := func(tag uint16, v ...uint32) field { return field{tag, typeLong, v} }
	perSample := func(v uint32) []uint32 {
		s := make([]uint32, l.spp)
		for i := range s {
			s[i] = v
		}
		return s
	}
	photometric := uint32(photometricMinIsBlack)
	if l.spp >= 3 {
		photometric = photometricRGB
	}
	f := []field{
		long(tagImageWidth, uint32(l.width)),
		long(tagImageLength, uint32(l.height)),
		short(tagBitsPerSample, perSample(uint32(8*l.dtype.Size()))...),
		short(tagCompression, uint32(l.compression)),
		short(tagPhotometric, photometric),
		long(tagStripOffsets, make([]uint32, len(counts))...),
		short(tagSamplesPerPixel, uint32(l.spp)),
		long(tagRowsPerStrip, uint32(l.rowsPerStrip)),
		long(tagStripByteCounts, counts...),
		{tagXResolution, typeRational, []uint32{1, 1}},
		{tagYResolution, typeRational, []uint32{1, 1}},
		short(tagPlanarConfig, planarContig),
		short(tagResolutionUnit, resUnitNone),
	}
	if l.predictor != predictorNone {
		f = append(f, short(tagPredictor, uint32(l.predictor)))
	}
	if l.spp == 2 || l.spp == 4 {
		f = append(f, short(tagExtraSamples, extraUnassoc))
	}
	return append(f, short(tagSampleFormat, perSample(uint32(l.format))...))
}

// valueBytes is the size of a field's values; those over 4 bytes are
// stored after the IFD, at an even offset.
func (f field) valueBytes() uint64 {
	if f.typ == typeShort {
		return 2 * uint64(len(f.values))
	}
	return 4 * uint64(len(f.values))
}

// ifdLength is the size of the IFD of fields with its out-of-line values.
func ifdLength(fields []field) uint64 {
	n := 2 + 12*uint64(len(fields)) + 4
	for _, f := range fields {
		if b := f.valueBytes(); b > 4 {
			n += b + b%2
		}
	}
	return n
}

// serializeIFD lays out fields as an IFD at offset pos, followed by the
// values that do not fit in their entries, pointing to the next IFD at
// next (0 for none).
func serializeIFD(fields []field, pos, next uint64) []byte {
	le := binary.LittleEndian
	b := le.AppendUint16(nil, uint16(len(fields)))
	var extra []byte
	extraStart := pos + 2 + 12*uint64(len(fields)) + 4
	for _, f := range fields {
		var v []byte
		for _, x := range f.values {
			if f.typ == typeShort {
				v = le.AppendUint16(v, uint16(x))
			} else {
				v = le.AppendUint32(v, x)
			}
		}
		count := len(f.values)
		if f.typ == typeRational {
			count /= 2
		}
		b = le.AppendUint16(b, f.tag)
		b = le.AppendUint16(b, f.typ)
		b = le.AppendUint32(b, uint32(count))
		if len(v) <= 4 {
			b = append(b, v...)
			b = append(b, make([]byte, 4-len(v))...)
			continue
		}
		b = le.AppendUint32(b, uint32(extraStart+uint64(len(extra))))
		extra = append(extra, v...)
		if len(extra)%2 != 0 {
			extra = append(extra, 0)
		}
	}
	b = le.AppendUint32(b, uint32(next))
	return append(b, extra...)
}

// pageEncoder turns pages into compressed strips, reusing its buffers.
// Strips are compressed independently, so they are encoded on all cores,
// each worker with its own buffers; the strips are the same bytes however
// many cores there are.
type pageEncoder struct {
	workers []stripEncoder
	strips  [][]byte
}

// stripEncoder holds one worker's buffers and compressors.
type stripEncoder struct {
	raw, scratch []byte
	data, hdata  bytes.Buffer
	zw, zh       *zlib.Writer // at deflateLevel, and Huffman only
	lzw          *lzwEncoder
}

// zlibInto compresses src into buf with *zw, made at level on first use,
// and returns buf's bytes.
func zlibInto(zw **zlib.Writer, buf *bytes.Buffer, level int, src []byte) []byte {
	buf.Reset()
	if *zw == nil {
		*zw, _ = zlib.NewWriterLevel(buf, level) // a valid level cannot fail
	} else {
		(*zw).Reset(buf)
	}
	(*zw).Write(src) // writes to a bytes.Buffer cannot fail
	(*zw).Close()
	return buf.Bytes()
}

// deflateLevel is the klauspost/compress level of Deflate strips. Each
// strip is also coded with Huffman codes alone, and the smaller kept:
// a photograph's predicted samples have few repeats for LZ77 to find, and
// on them Huffman coding alone is smaller than zlib's level 6 (libtiff's
// default, which OpenCV and tifffile use) in a tenth of its time, while
// images with repeats keep the LZ77 matches (docs/perf/codecs.md).
const deflateLevel = 5

// encodePage returns the strips of page p, each padded to an even length
// so that what follows starts at an even offset, and the size of each
// without the padding. The slices are valid until the next call.
func (e *pageEncoder) encodePage(src any, p int, l writeLayout) ([][]byte, []uint32, error) {
	n := ceilDiv(l.height, l.rowsPerStrip)
	workers := max(1, min(runtime.GOMAXPROCS(0), n))
	if len(e.workers) < workers {
		e.workers = append(e.workers, make([]stripEncoder, workers-len(e.workers))...)
	}
	e.strips = slices.Grow(e.strips[:0], n)[:n]
	counts := make([]uint32, n)
	err := nd.ForEach(workers, n, nil, func(w, k int) {
		data, count := e.workers[w].encodeStrip(src, p, k, l, e.strips[k][:0])
		e.strips[k], counts[k] = data, count
	})
	return e.strips, counts, err
}

// encodeStrip appends strip k of page p, padded to an even length, to dst
// and returns it with its size before padding.
func (e *stripEncoder) encodeStrip(src any, p, k int, l writeLayout, dst []byte) ([]byte, uint32) {
	rowSamples := l.width * l.spp
	rowBytes := l.rowBytes()
	size := l.dtype.Size()
	y0 := k * l.rowsPerStrip
	rows := min(l.rowsPerStrip, l.height-y0)
	first := (p*l.height + y0) * rowSamples
	e.raw = appendLittleEndian(e.raw[:0], src, first, first+rows*rowSamples)
	for r := range rows {
		row := e.raw[r*rowBytes : (r+1)*rowBytes]
		switch l.predictor {
		case predictorHorizontal:
			horizontal(row, size, l.spp, binary.LittleEndian, true)
		case predictorFloat:
			e.scratch = grow(e.scratch, rowBytes)
			floatPredictor(row, e.scratch, size, l.spp, binary.LittleEndian, true)
		}
	}
	switch l.compression {
	case compressionNone:
		dst = append(dst, e.raw...)
	case compressionDeflate:
		z := zlibInto(&e.zw, &e.data, deflateLevel, e.raw)
		if h := zlibInto(&e.zh, &e.hdata, zlib.HuffmanOnly, e.raw); len(h) < len(z) {
			z = h
		}
		dst = append(dst, z...)
	case compressionLZW:
		if e.lzw == nil {
			e.lzw = new(lzwEncoder)
		}
		dst = e.lzw.encode(dst, e.raw)
	}
	count := uint32(len(dst))
	if len(dst)%2 != 0 {
		dst = append(dst, 0)
	}
	return dst, count
}

// appendLittleEndian appends elements [from, to) of an array's data to
// dst, little-endian.
func appendLittleEndian(dst []byte, data any, from, to int) []byte {
	le := binary.LittleEndian
	switch d := data.(type) {
	case []uint8:
		return append(dst, d[from:to]...)
	case []int8:
		return appendEach(dst, d[from:to], func(b []byte, v int8) []byte { return append(b, byte(v)) })
	case []uint16:
		n := len(dst)
		dst = slices.Grow(dst, 2*(to-from))[:n+2*(to-from)]
		for i, v := range d[from:to] {
			le.PutUint16(dst[n+2*i:], v)
		}
		return dst
	case []int16:
		return appendEach(dst, d[from:to], func(b []byte, v int16) []byte { return le.AppendUint16(b, uint16(v)) })
	case []nd.Half:
		return appendEach(dst, d[from:to], func(b []byte, v nd.Half) []byte { return le.AppendUint16(b, uint16(v)) })
	case []uint32:
		return appendEach(dst, d[from:to], le.AppendUint32)
	case []int32:
		return appendEach(dst, d[from:to], func(b []byte, v int32) []byte { return le.AppendUint32(b, uint32(v)) })
	case []uint64:
		return appendEach(dst, d[from:to], le.AppendUint64)
	case []int64:
		return appendEach(dst, d[from:to], func(b []byte, v int64) []byte { return le.AppendUint64(b, uint64(v)) })
	case []float32:
		return appendEach(dst, d[from:to], func(b []byte, v float32) []byte { return le.AppendUint32(b, math.Float32bits(v)) })
	case []float64:
		return appendEach(dst, d[from:to], func(b []byte, v float64) []byte { return le.AppendUint64(b, math.Float64bits(v)) })
	}
	return dst
}

func appendEach[T any](dst []byte, src []T, put func([]byte, T) []byte) []byte {
	for _, v := range src {
		dst = put(dst, v)
	}
	return dst
}
