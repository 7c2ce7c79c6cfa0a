package tiff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

var update = flag.Bool("update", false, "rewrite generated files under testdata (golden TIFFs, fuzz seed corpus)")

// sameArray reports whether a and b have equal shapes, dtypes and bitwise
// equal data.
func sameArray(a, b nd.Array) bool {
	return slices.Equal(a.Shape, b.Shape) && a.DType() == b.DType() && bytes.Equal(leBytes(a), leBytes(b))
}

// leBytes is an array's data, little-endian.
func leBytes(a nd.Array) []byte { return appendLittleEndian(nil, a.Data, 0, a.Len()) }

// sha256Hex is the SHA-256 of an array's little-endian data, as the
// fixture script records it.
func sha256Hex(a nd.Array) string {
	sum := sha256.Sum256(leBytes(a))
	return hex.EncodeToString(sum[:])
}

// randArray makes an array of dt and shape with values spread over the
// type's range; floats include NaN, ±Inf, −0 and subnormals.
func randArray(t testing.TB, rng *rand.Rand, dt nd.DType, shape ...int) nd.Array {
	t.Helper()
	a, err := nd.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := dt.Range()
	for i := range a.Len() {
		var v float64
		switch {
		case dt.IsInteger():
			v = lo + math.Floor(rng.Float64()*(hi-lo+1))
		case rng.IntN(8) == 0:
			v = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e-40, -5e-320}[rng.IntN(6)]
		default:
			v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
		}
		nd.Store(a.Data, i, 1, []float64{v})
	}
	return a
}

// smoothArray makes an array of dt whose values repeat with small
// variations, as images do: data that predictors and LZW compress well
// (yet not so well that LZW's table never fills). Float values are
// multiples of 1/4, with short mantissas.
func smoothArray(t testing.TB, dt nd.DType, shape ...int) nd.Array {
	t.Helper()
	a, err := nd.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Len() {
		v := float64((i/3)%251 + (i*7)%3 + i/97%2)
		if !dt.IsInteger() {
			v /= 4
		}
		nd.Store(a.Data, i, 1, []float64{v})
	}
	return a
}

// checkTyped fails unless err is a *FormatError (kind "format") or an
// *UnsupportedError (kind "unsupported") whose message has the package
// prefix and contains want.
func checkTyped(t testing.TB, err error, kind, want string) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	switch {
	case err == nil:
		t.Errorf("no error, want a %s error containing %q", kind, want)
		return
	case kind == "format" && !errors.As(err, &fe), kind == "unsupported" && !errors.As(err, &ue):
		t.Errorf("error %q (%T) is not a %s error", err, err, kind)
	case !strings.HasPrefix(err.Error(), "tiff: "):
		t.Errorf("error %q lacks the package prefix", err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("error %q does not contain %q", err, want)
	}
}

// readRef returns the reference file testdata/ref/name.tif.
func readRef(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ref", name+".tif"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// emptyDir removes dir and makes it again, empty, for -update to fill.
func emptyDir(t testing.TB, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// readBytes reads a TIFF held in memory.
func readBytes(b []byte) (Image, error) { return Read(bytes.NewReader(b), int64(len(b))) }

// writeBytes writes img to memory.
func writeBytes(t testing.TB, img Image, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, img, opt); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// buildTIFF assembles a little-endian classic TIFF by hand: one IFD per
// element of pages, each followed by its data; StripOffsets (or
// TileOffsets) values are given relative to the page's data and made
// absolute here, except for a page without data, whose offsets are kept.
func buildTIFF(pages []testPage) []byte {
	b := []byte{'I', 'I', 42, 0, 8, 0, 0, 0}
	for i, p := range pages {
		fields := slices.Clone(p.fields)
		ifdStart := uint64(len(b))
		dataStart := ifdStart + ifdLength(fields)
		for j, f := range fields {
			if (f.tag == tagStripOffsets || f.tag == tagTileOffsets) && p.data != nil {
				v := slices.Clone(f.values)
				for k := range v {
					v[k] += uint32(dataStart)
				}
				fields[j].values = v
			}
		}
		next := uint64(0)
		if i+1 < len(pages) {
			next = dataStart + uint64(len(p.data)+len(p.data)%2)
		}
		b = append(b, serializeIFD(fields, ifdStart, next)...)
		b = append(b, p.data...)
		if len(p.data)%2 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

type testPage struct {
	fields []field // in ascending tag order
	data   []byte
}

// grayPage is the IFD of an uncompressed one-strip MinIsBlack page of
// h×w uint8 samples, with its data, for tests to alter.
func grayPage(h, w int) testPage {
	data := make([]byte, h*w)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return testPage{fields: []field{
		{tagImageWidth, typeLong, []uint32{uint32(w)}},
		{tagImageLength, typeLong, []uint32{uint32(h)}},
		{tagBitsPerSample, typeShort, []uint32{8}},
		{tagCompression, typeShort, []uint32{compressionNone}},
		{tagPhotometric, typeShort, []uint32{photometricMinIsBlack}},
		{tagStripOffsets, typeLong, []uint32{0}},
		{tagSamplesPerPixel, typeShort, []uint32{1}},
		{tagRowsPerStrip, typeLong, []uint32{uint32(h)}},
		{tagStripByteCounts, typeLong, []uint32{uint32(h * w)}},
	}, data: data}
}

// with returns p with field tag set to values (added, in tag order, if
// p lacks it), or removed when values is nil.
func (p testPage) with(tag uint16, typ uint16, values ...uint32) testPage {
	fields := slices.Clone(p.fields)
	i, found := slices.BinarySearchFunc(fields, tag, func(f field, tag uint16) int { return int(f.tag) - int(tag) })
	switch {
	case values == nil && found:
		fields = slices.Delete(fields, i, i+1)
	case found:
		fields[i] = field{tag, typ, values}
	case values != nil:
		fields = slices.Insert(fields, i, field{tag, typ, values})
	}
	p.fields = fields
	return p
}
