package tiff

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestReadErrors reads files built or altered by hand, each wrong or
// unsupported in one way, and checks the error's type and message.
func TestReadErrors(t *testing.T) {
	gray := grayPage(5, 7)
	one := func(p testPage) []byte { return buildTIFF([]testPage{p}) }
	short := func(tag uint16, v ...uint32) []byte { return one(gray.with(tag, typeShort, v...)) }
	long := func(tag uint16, v ...uint32) []byte { return one(gray.with(tag, typeLong, v...)) }
	without := func(tag uint16) []byte { return one(gray.with(tag, 0)) }
	float32Page := gray.with(tagBitsPerSample, typeShort, 32).with(tagSampleFormat, typeShort, sampleFormatFloat).
		with(tagStripByteCounts, typeLong, 4*35)
	float32Page.data = make([]byte, 4*35)
	rgb := gray.with(tagSamplesPerPixel, typeShort, 3).with(tagPhotometric, typeShort, photometricRGB).
		with(tagStripByteCounts, typeLong, 3*35)
	rgb.data = make([]byte, 3*35)
	deflatePage := func(data []byte) []byte {
		p := gray.with(tagCompression, typeShort, compressionDeflate).with(tagStripByteCounts, typeLong, uint32(len(data)))
		p.data = data
		return one(p)
	}
	lzwPage := func(data []byte) []byte {
		p := gray.with(tagCompression, typeShort, compressionLZW).with(tagStripByteCounts, typeLong, uint32(len(data)))
		p.data = data
		return one(p)
	}
	packBits := func(data []byte) []byte {
		p := gray.with(tagCompression, typeShort, compressionPackBits).with(tagStripByteCounts, typeLong, uint32(len(data)))
		p.data = data
		return one(p)
	}
	var enc lzwEncoder
	lzwData := enc.encode(nil, gray.data)
	loop := one(gray)
	binary.LittleEndian.PutUint32(loop[8+2+12*len(gray.fields):], 8) // the IFD's next pointer: itself

	for _, tc := range []struct {
		name, kind, want string
		file             []byte
	}{
		{"empty", "format", "too short", nil},
		{"short", "format", "too short", []byte("II*\x00")},
		{"not TIFF", "format", "not a TIFF file", []byte("GIF89a\x01\x00\x01\x00")},
		{"magic", "format", "magic number 298", []byte("II\x2a\x01\x08\x00\x00\x00")},
		{"IFD beyond the file", "format", "beyond the end", []byte("II*\x00\xff\x00\x00\x00")},
		{"no IFD", "format", "no IFD", []byte("II*\x00\x00\x00\x00\x00")},
		{"IFD without entries", "format", "0 entries", []byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"BigTIFF offset size", "format", "offset size 4", []byte("II+\x00\x04\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00")},
		{"IFD loop", "format", "loops back to offset 8", loop},
		{"no width", "format", "lacks ImageWidth", without(tagImageWidth)},
		{"zero height", "format", "image size 0×7", long(tagImageLength, 0)},
		{"width as text", "format", "field type 2", one(gray.with(tagImageWidth, typeASCII, 7))},
		{"two widths", "format", "2 values", long(tagImageWidth, 7, 7)},
		{"no samples", "format", "SamplesPerPixel is 0", short(tagSamplesPerPixel, 0)},
		{"5 samples", "unsupported", `samples per pixel "5"`, short(tagSamplesPerPixel, 5)},
		{"12 bits", "unsupported", `BitsPerSample "12"`, short(tagBitsPerSample, 12)},
		{"bilevel", "unsupported", "bilevel", without(tagBitsPerSample)},
		{"mixed bits", "unsupported", `BitsPerSample "8,8,16"`, one(rgb.with(tagBitsPerSample, typeShort, 8, 8, 16))},
		{"8-bit float", "unsupported", `BitsPerSample "8"`, short(tagSampleFormat, sampleFormatFloat)},
		{"complex", "unsupported", `sample format "complex integer" (5)`, short(tagSampleFormat, 5)},
		{"YCbCr", "unsupported", `photometric interpretation "YCbCr" (6)`, short(tagPhotometric, 6)},
		{"CIELab", "unsupported", `photometric interpretation "CIELab" (8)`, short(tagPhotometric, 8)},
		{"photometric 99", "unsupported", `photometric interpretation "99"`, short(tagPhotometric, 99)},
		{"RGB of one sample", "format", "RGB with 1 samples", short(tagPhotometric, photometricRGB)},
		{"palette without map", "format", "ColorMap of 768", short(tagPhotometric, photometricPalette)},
		{"palette of int8", "unsupported", `"Palette" (3)`, one(gray.with(tagPhotometric, typeShort, 3).with(tagSampleFormat, typeShort, 2))},
		{"MinIsWhite int8", "unsupported", `"MinIsWhite" (0)`, one(gray.with(tagPhotometric, typeShort, 0).with(tagSampleFormat, typeShort, 2))},
		{"JPEG", "unsupported", `compression "JPEG" (7)`, short(tagCompression, 7)},
		{"old JPEG", "unsupported", `compression "old-style JPEG" (6)`, short(tagCompression, 6)},
		{"compression 12345", "unsupported", `compression "12345"`, short(tagCompression, 12345)},
		{"fill order", "unsupported", `FillOrder "2"`, short(tagFillOrder, 2)},
		{"planar 3", "format", "PlanarConfiguration 3", short(tagPlanarConfig, 3)},
		{"horizontal predictor on floats", "unsupported", `predictor "horizontal differencing" (2)`, one(float32Page.with(tagPredictor, typeShort, 2))},
		{"float predictor on integers", "unsupported", `predictor "floating point" (3)`, short(tagPredictor, 3)},
		{"predictor 9", "unsupported", `predictor "9"`, short(tagPredictor, 9)},
		{"no rows per strip", "format", "RowsPerStrip is 0", long(tagRowsPerStrip, 0)},
		{"no strip offsets", "format", "lacks strip offsets", without(tagStripOffsets)},
		{"strips miscounted", "format", "1 strip offsets and 1 byte counts for 3 strips", long(tagRowsPerStrip, 2)},
		{"strip beyond the file", "format", "strip 0 (35 bytes at offset", long(tagStripOffsets, 1<<30)},
		{"strip count beyond the file", "format", "beyond the end", long(tagStripByteCounts, 1<<30)},
		{"short strip", "format", "strip 0 has 10 bytes; 5 rows of 7 pixels need 35", long(tagStripByteCounts, 10)},
		{"empty strip", "format", "strip 0 is empty", long(tagStripByteCounts, 0)},
		{"values beyond the file", "format", "values of tag 258", patchEntry(one(rgb.with(tagBitsPerSample, typeShort, 8, 8, 8)), tagBitsPerSample, 1<<20)},
		{"tile size 0", "format", "tile size 16×0", one(gray.with(tagTileWidth, typeLong, 0).with(tagTileLength, typeLong, 16))},
		{"Deflate header", "format", "Deflate header", deflatePage(gray.data)},
		{"Deflate cut short", "format", "Deflate data end after", deflatePage(zlibBytes(gray.data)[:12])},
		{"LZW cut short", "format", "LZW data end after", lzwPage(lzwData[:len(lzwData)/2])},
		{"old-style LZW", "unsupported", "old-style LZW", lzwPage([]byte{0, 1, 2, 3})},
		{"PackBits run cut short", "format", "PackBits literal run beyond the data", one(gray.with(tagCompression, typeShort, compressionPackBits).with(tagStripByteCounts, typeLong, 4))},
		{"PackBits cut short", "format", "PackBits data end after 3 of 35", packBits([]byte{2, 1, 2, 3})},
		{"PackBits repeat cut short", "format", "PackBits repeat run beyond the data", packBits([]byte{2, 1, 2, 3, 0xfe})},
		{"only a thumbnail", "format", "no full-resolution image", long(tagNewSubfileType, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBytes(tc.file)
			checkTyped(t, err, tc.kind, tc.want)
		})
	}
}

// patchEntry sets the value (or value offset) of tag in the first IFD of
// a little-endian classic TIFF.
func patchEntry(b []byte, tag uint16, value uint32) []byte {
	le := binary.LittleEndian
	ifd := int(le.Uint32(b[4:]))
	for i := range int(le.Uint16(b[ifd:])) {
		e := b[ifd+2+12*i:]
		if le.Uint16(e) == tag {
			le.PutUint32(e[8:], value)
		}
	}
	return b
}

// zlibBytes is b compressed by compress/zlib at its best level, which
// codes long runs of zeros at deflate's greatest ratio (about 1:1030),
// as a crafted file would.
func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestHugeClaimsFailFast checks that files of a few hundred bytes that
// claim 2^31 pixels are refused before anything of that size is
// allocated.
func TestHugeClaimsFailFast(t *testing.T) {
	huge := grayPage(1, 1).with(tagImageWidth, typeLong, 1<<16).with(tagImageLength, typeLong, 1<<15).
		with(tagRowsPerStrip, typeLong, 1<<15)
	deflate := huge.with(tagCompression, typeShort, compressionDeflate)
	deflate.data = zlibBytes(make([]byte, 1000))
	deflate = deflate.with(tagStripByteCounts, typeLong, uint32(len(deflate.data)))
	tiled := deflate.with(tagRowsPerStrip, 0, nil...).with(tagStripOffsets, 0, nil...).with(tagStripByteCounts, 0, nil...).
		with(tagTileWidth, typeLong, 1<<16).with(tagTileLength, typeLong, 1<<15).
		with(tagTileOffsets, typeLong, 0).with(tagTileByteCounts, typeLong, uint32(len(deflate.data)))
	manyStrips := huge.with(tagRowsPerStrip, typeLong, 1)
	// Pages whose strips, each within the bound on its own, are one
	// strip of the file.
	shared := grayPage(1, 1).with(tagImageWidth, typeLong, 1<<12).with(tagImageLength, typeLong, 1<<10).
		with(tagRowsPerStrip, typeLong, 1<<10).with(tagCompression, typeShort, compressionDeflate)
	shared.data = zlibBytes(make([]byte, 1<<22))
	shared = shared.with(tagStripByteCounts, typeLong, uint32(len(shared.data)))
	sharingPages := []testPage{shared}
	for range 7 {
		p := shared.with(tagStripOffsets, typeLong, uint32(8+ifdLength(shared.fields)))
		p.data = nil // offsets taken as they are
		sharingPages = append(sharingPages, p)
	}
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"uncompressed", "strip 0 has 1 bytes", buildTIFF([]testPage{huge})},
		{"deflate", "claims 2147483648 decoded bytes", buildTIFF([]testPage{deflate})},
		{"tiled", "tile 0 claims 2147483648 decoded bytes", buildTIFF([]testPage{tiled})},
		{"one row a strip", "32768 strips cannot be listed", buildTIFF([]testPage{manyStrips})},
		{"pages sharing a strip", "the pages claim 33554432 decoded bytes", buildTIFF(sharingPages)},
	} {
		if tc.name != "pages sharing a strip" && len(tc.file) > 300 {
			t.Errorf("%s: the test file has %d bytes", tc.name, len(tc.file))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := readBytes(tc.file)
		runtime.ReadMemStats(&after)
		checkTyped(t, err, "format", tc.want)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
			t.Errorf("%s: reading allocated %d bytes", tc.name, grown)
		}
	}
}

// TestSharedIFDValues checks that IFDs sharing one large value array, a
// way to make a small file cost much reading, are refused.
func TestSharedIFDValues(t *testing.T) {
	const strips = 5000
	le := binary.LittleEndian
	build := func(pages int) []byte {
		b := []byte{'I', 'I', 42, 0, 0, 0, 0, 0, 7, 0}
		offsets := len(b)
		for range strips {
			b = le.AppendUint32(b, 8) // every strip is the byte at 8
		}
		counts := len(b)
		for range strips {
			b = le.AppendUint32(b, 1)
		}
		le.PutUint32(b[4:], uint32(len(b)))
		entry := func(b []byte, tag, typ uint16, count, value uint32) []byte {
			b = le.AppendUint16(b, tag)
			b = le.AppendUint16(b, typ)
			b = le.AppendUint32(b, count)
			return le.AppendUint32(b, value)
		}
		for p := range pages {
			b = le.AppendUint16(b, 6)
			b = entry(b, tagImageWidth, typeLong, 1, 1)
			b = entry(b, tagImageLength, typeLong, 1, strips)
			b = entry(b, tagBitsPerSample, typeShort, 1, 8)
			b = entry(b, tagStripOffsets, typeLong, strips, uint32(offsets))
			b = entry(b, tagRowsPerStrip, typeLong, 1, 1)
			b = entry(b, tagStripByteCounts, typeLong, strips, uint32(counts))
			next := uint32(0)
			if p+1 < pages {
				next = uint32(len(b) + 4)
			}
			b = le.AppendUint32(b, next)
		}
		return b
	}
	_, err := readBytes(build(200))
	checkTyped(t, err, "format", "IFDs that share bytes")

	// Two such pages make a valid, if odd, file.
	img, err := readBytes(build(2))
	if err != nil || !slices.Equal(img.Array.Shape, []int{2, strips, 1}) {
		t.Errorf("two pages sharing strip arrays: %v, %v", img.Array.Shape, err)
	}
}

// TestPalette16 reads a 16-bit palette image (whose colour map, 384 KiB,
// is built here rather than committed).
func TestPalette16(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cmap := make([]uint32, 3<<16)
	for i := range cmap {
		cmap[i] = uint32(rng.IntN(1 << 16))
	}
	p := grayPage(5, 7).with(tagBitsPerSample, typeShort, 16).with(tagPhotometric, typeShort, photometricPalette).
		with(tagStripByteCounts, typeLong, 70).with(tagColorMap, typeShort, cmap...)
	p.data = make([]byte, 70)
	want := make([]uint16, 0, 35*3)
	for i := range 35 {
		index := uint16(rng.IntN(1 << 16))
		binary.LittleEndian.PutUint16(p.data[2*i:], index)
		want = append(want, uint16(cmap[index]), uint16(cmap[1<<16+int(index)]), uint16(cmap[2<<16+int(index)]))
	}
	img, err := readBytes(buildTIFF([]testPage{p}))
	if err != nil {
		t.Fatal(err)
	}
	wantArray, _ := nd.FromSlice(want, 5, 7, 3)
	if img.Channels != 3 || !sameArray(img.Array, wantArray) {
		t.Errorf("read %v with %d channels, differing from the colour map's values", img.Array.Shape, img.Channels)
	}
}

// TestTruncated reads every prefix of a few files: each must give a typed
// error, or (when only padding was cut) the same image.
func TestTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	files := sampleFiles(t, Image{randArray(t, rng, nd.Int16, 2, 6, 9, 3), 3},
		"tf-u2-c3-p3-zlib-sep-strip-be", "lt-f4-c4-p1-lzw-fpred-sep-tile-le", "tf-i1-c4-p1-deflate-tile-be")
	for i, b := range files {
		full, err := readBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for n := range len(b) {
			img, err := readBytes(b[:n])
			if err == nil {
				if !sameArray(img.Array, full.Array) {
					t.Errorf("file %d cut to %d bytes reads as a different image", i, n)
				}
				continue
			}
			failed++
			checkReadError(t, err)
		}
		if failed < len(b)-2 {
			t.Errorf("file %d: only %d of its %d prefixes fail", i, failed, len(b))
		}
	}
}

// sampleFiles returns img written with each compression and a predictor,
// and the named reference files.
func sampleFiles(t *testing.T, img Image, refs ...string) [][]byte {
	var files [][]byte
	for _, c := range compressions {
		files = append(files, writeBytes(t, img, Options{c, true}))
	}
	for _, name := range refs {
		files = append(files, readRef(t, name))
	}
	return files
}

// checkReadError fails unless err is one of the package's typed errors
// with its prefix.
func checkReadError(t testing.TB, err error) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	if !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
	if !bytes.HasPrefix([]byte(err.Error()), []byte("tiff: ")) {
		t.Fatalf("error %q lacks the package prefix", err)
	}
}

// TestMutations reads many randomly altered copies of a few files: no
// panic, a typed error or a valid array.
func TestMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	files := sampleFiles(t, Image{randArray(t, rng, nd.Float32, 2, 4, 5, 2), 2},
		"tf-u2-c3-p3-zlib-sep-strip-be", "lt-u1-c3-p1-packbits-strip-le", "tf-u1-c0-p1-none-tile-le")
	for range 3000 {
		b := bytes.Clone(files[rng.IntN(len(files))])
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] ^= 1 << rng.IntN(8)
			case 1:
				b[i] = byte(rng.IntN(256))
			default:
				b[i] = []byte{0, 1, 0xff, 0x7f, 0x80}[rng.IntN(5)]
			}
		}
		img, err := readBytes(b)
		if err != nil {
			checkReadError(t, err)
			continue
		}
		if err := img.Array.Check(); err != nil {
			t.Fatalf("read an invalid array: %v", err)
		}
	}
}

// TestReaderShorterThanSize checks a reader that holds less than the size
// it is read with: a truncated file, not a panic or a short array.
func TestReaderShorterThanSize(t *testing.T) {
	b := writeBytes(t, Image{randArray(t, rand.New(rand.NewPCG(17, 18)), nd.Uint16, 4, 6), 0}, Options{})
	_, err := Read(bytes.NewReader(b[:len(b)-3]), int64(len(b)))
	checkTyped(t, err, "format", "truncated IFD 0: strip 0")
	if _, err := Read(bytes.NewReader(b), -1); err == nil {
		t.Error("Read accepted a negative size")
	}
	if _, err := ReadFile("testdata/no-such-file.tif"); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
}
