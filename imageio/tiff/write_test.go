package tiff

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/tiff/lzw"

	"github.com/ndconv/ndconv/nd"
)

var compressions = []Compression{None, Deflate, LZW}

// imageShape is the shape of pages of h×w pixels with channels (0 for
// none).
func imageShape(pages, h, w, channels int) []int {
	s := []int{h, w}
	if pages > 1 {
		s = append([]int{pages}, s...)
	}
	if channels != 0 {
		s = append(s, channels)
	}
	return s
}

// TestRoundTrip writes and reads back every dtype × channels × pages ×
// compression × predictor, on random data including NaN, ±Inf, −0 and
// subnormals, and on an image of several strips.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range goldenDTypes {
		for _, channels := range []int{0, 2, 3, 4} {
			for _, pages := range []int{1, 3} {
				for _, c := range compressions {
					for _, pred := range []bool{false, true} {
						a := randArray(t, rng, dt, imageShape(pages, 5, 7, channels)...)
						checkRoundTrip(t, fmt.Sprintf("%v/c%d/p%d/%v/pred=%v", dt, channels, pages, c, pred), Image{a, channels}, Options{c, pred})
					}
				}
			}
		}
		for _, c := range compressions {
			// 130 rows of 260×3 samples: several strips, the last one short.
			a := smoothArray(t, dt, 130, 260, 3)
			checkRoundTrip(t, fmt.Sprintf("%v/strips/%v", dt, c), Image{a, 3}, Options{c, true})
		}
	}
}

func checkRoundTrip(t *testing.T, name string, img Image, opt Options) {
	t.Helper()
	b := writeBytes(t, img, opt)
	got, err := readBytes(b)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if got.Channels != img.Channels || !sameArray(got.Array, img.Array) {
		t.Errorf("%s: read back %v %v with %d channels, differing from what was written", name, got.Array.Shape, got.Array.DType(), got.Channels)
	}
}

// TestWriteStrips checks the strip layout: about 64 KiB per strip, at
// least one row.
func TestWriteStrips(t *testing.T) {
	for _, tc := range []struct {
		h, w, channels int
		dt             nd.DType
		rows, strips   int
	}{
		{5, 7, 0, nd.Uint8, 5, 1},
		{300, 256, 0, nd.Uint8, 256, 2},
		{300, 256, 4, nd.Float64, 8, 38},
		{3, 40000, 0, nd.Float64, 1, 3}, // a row over 64 KiB: one row a strip
	} {
		a, err := nd.New(tc.dt, imageShape(1, tc.h, tc.w, tc.channels)...)
		if err != nil {
			t.Fatal(err)
		}
		b := writeBytes(t, Image{a, tc.channels}, Options{})
		s := &source{r: bytes.NewReader(b), size: int64(len(b)), metaBudget: 1 << 20}
		first, err := s.readHeader()
		if err != nil {
			t.Fatal(err)
		}
		ifds, err := s.pageList(first)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parsePage(s, ifds[0])
		if err != nil {
			t.Fatal(err)
		}
		if p.chunkHeight != tc.rows || len(p.offsets) != tc.strips {
			t.Errorf("%d×%d×%d %v: %d strips of %d rows, want %d of %d", tc.h, tc.w, tc.channels, tc.dt, len(p.offsets), p.chunkHeight, tc.strips, tc.rows)
		}
	}
}

// TestWriteErrors checks what Write refuses.
func TestWriteErrors(t *testing.T) {
	u8 := func(shape ...int) nd.Array {
		a, err := nd.New(nd.Uint8, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tc := range []struct {
		img  Image
		opt  Options
		want string
	}{
		{Image{u8(5), 0}, Options{}, "image shape"},
		{Image{u8(2, 3, 4, 5), 0}, Options{}, "image shape"},
		{Image{u8(5, 7, 3), 4}, Options{}, "image shape"},
		{Image{u8(5, 7, 1), 1}, Options{}, "image shape"},
		{Image{u8(5, 7, 5), 5}, Options{}, "image shape"},
		{Image{u8(0, 7), 0}, Options{}, "cannot be empty"},
		{Image{u8(0, 5, 7), 0}, Options{}, "cannot be empty"},
		{Image{u8(5, 7), 0}, Options{Compression: 9}, `compression option "Compression(9)"`},
	} {
		err := Write(io.Discard, tc.img, tc.opt)
		checkTyped(t, err, "unsupported", tc.want)
	}
	if err := Write(io.Discard, Image{nd.Array{Shape: []int{2, 2}, Data: []complex64{1, 2, 3, 4}}, 0}, Options{}); err == nil {
		t.Error("Write accepted []complex64 data")
	}
	if err := Write(io.Discard, Image{nd.Array{Shape: []int{2, 3}, Data: []uint8{1, 2, 3, 4}}, 0}, Options{}); err == nil {
		t.Error("Write accepted data that do not match the shape")
	}
}

// TestWriteFailingWriter checks that an error of the underlying writer is
// returned.
func TestWriteFailingWriter(t *testing.T) {
	a := randArray(t, rand.New(rand.NewPCG(3, 4)), nd.Uint16, 3, 50, 60)
	full := len(writeBytes(t, Image{a, 0}, Options{}))
	for _, n := range []int{0, 4, 8, 100, full - 1} {
		err := Write(&limitedWriter{n: n}, Image{a, 0}, Options{})
		if err != errWriterFull {
			t.Errorf("writer failing after %d bytes: got %v", n, err)
		}
	}
}

type limitedWriter struct{ n int }

var errWriterFull = fmt.Errorf("writer full")

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errWriterFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestParseCompression(t *testing.T) {
	for _, c := range compressions {
		got, err := ParseCompression(strings.ToUpper(c.String()))
		if err != nil || got != c {
			t.Errorf("ParseCompression(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := ParseCompression("jpeg"); err == nil {
		t.Error("ParseCompression accepted jpeg")
	}
}

// TestLZWEncode checks the LZW writer, and the reader's decoder on what it
// writes, against golang.org/x/image/tiff/lzw,
// which reads TIFF's variant, on inputs that cross every code-width
// change and fill the table several times. (That libtiff reads it too is
// checked by the golden files.)
func TestLZWEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := map[string][]byte{"empty": {}, "one": {42}, "two": {1, 1}}
	for _, n := range []int{255, 256, 257, 510, 511, 512, 1023, 1024, 2047, 2048, 4093, 4094, 4095, 5000, 70000} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(rng.IntN(256))
		}
		inputs[fmt.Sprintf("random-%d", n)] = random
		few := make([]byte, n)
		for i := range few {
			few[i] = byte(rng.IntN(3))
		}
		inputs[fmt.Sprintf("three-symbols-%d", n)] = few
		inputs[fmt.Sprintf("run-%d", n)] = bytes.Repeat([]byte{7}, n)
	}
	// Every length around the first width changes, where an off-by-one
	// in the early change would show.
	for n := 0; n < 1200; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * i >> 3)
		}
		inputs[fmt.Sprintf("pattern-%d", n)] = b
	}
	var e lzwEncoder
	var d lzwDecoder
	for name, in := range inputs {
		enc := e.encode(nil, in)
		r := lzw.NewReader(bytes.NewReader(enc), lzw.MSB, 8)
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%s: decoded %d bytes (%v), want %d", name, len(got), err, len(in))
		}
		// And the reader's own decoder, into a buffer of the exact size.
		mine := make([]byte, len(in))
		if n, err := d.decode(mine, enc); err != nil || n != len(in) || !bytes.Equal(mine, in) {
			t.Errorf("%s: lzwDecoder decoded %d bytes (%v), want %d", name, n, err, len(in))
		}
	}
}

// goldenCases are the files TestGolden writes to testdata/golden, which
// testdata/make_tiff.py reads with libtiff and tifffile: every dtype ×
// compression × predictor, channels and page counts in turn, and a few
// images of several strips with data that compress well (LZW tables that
// fill and clear, predictors over long rows).
func goldenCases(t testing.TB) map[string]struct {
	img Image
	opt Options
} {
	cases := map[string]struct {
		img Image
		opt Options
	}{}
	i := 0
	for _, dt := range goldenDTypes {
		for _, c := range compressions {
			for _, pred := range []bool{false, true} {
				channels := []int{0, 2, 3, 4}[i%4]
				pages := 1 + i%3%2
				name := fmt.Sprintf("%v-c%d-p%d-%v", dt, channels, pages, c)
				if pred {
					name += "-pred"
				}
				rng := rand.New(rand.NewPCG(seedOf(name), 7))
				cases[name] = struct {
					img Image
					opt Options
				}{Image{randArray(t, rng, dt, imageShape(pages, 5, 7, channels)...), channels}, Options{c, pred}}
				i++
			}
		}
	}
	for _, tc := range []struct {
		dt       nd.DType
		shape    []int
		channels int
		opt      Options
	}{
		{nd.Uint8, []int{100, 300}, 0, Options{LZW, false}}, // the LZW table fills and clears twice
		{nd.Uint16, []int{120, 200, 3}, 3, Options{LZW, true}},
		{nd.Float32, []int{100, 300}, 0, Options{Deflate, true}},
		{nd.Float64, []int{60, 150, 2}, 2, Options{LZW, true}},
	} {
		name := fmt.Sprintf("%v-%s-%v-strips", tc.dt, strings.Trim(strings.ReplaceAll(fmt.Sprint(tc.shape), " ", "x"), "[]"), tc.opt.Compression)
		cases[name] = struct {
			img Image
			opt Options
		}{Image{smoothArray(t, tc.dt, tc.shape...), tc.channels}, tc.opt}
	}
	return cases
}

func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// goldenView is what make_tiff.py recorded of one golden file: the
// samples libtiff read (and tifffile, where it can decode the file), and
// tags as libtiff reports them.
type goldenView struct {
	fixture
	Compression    int      `json:"compression"`
	Photometric    int      `json:"photometric"`
	Predictor      int      `json:"predictor"`
	Planar         int      `json:"planar"`
	ResolutionUnit int      `json:"resolution_unit"`
	ExtraSamples   []int    `json:"extrasamples"`
	Readers        []string `json:"readers"`
}

// TestGolden checks that the files Write makes are read by libtiff and
// tifffile as written: the committed golden files must be what Write
// makes now (-update rewrites them; then rerun testdata/make_tiff.py),
// and golden.json, the reference readers' view of them, must match the
// arrays and options they were written from.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	cases := goldenCases(t)
	if *update {
		emptyDir(t, dir)
	}
	views := map[string]goldenView{}
	if !*update {
		views = loadJSON[goldenView](t, filepath.Join("testdata", "golden.json"))
		if len(views) != len(cases) {
			t.Errorf("golden.json has %d files, the test writes %d: run go test -run TestGolden -update, then make_tiff.py", len(views), len(cases))
		}
	}
	for name, tc := range cases {
		b := writeBytes(t, tc.img, tc.opt)
		path := filepath.Join(dir, name+".tif")
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b) {
			t.Errorf("%s differs from what Write makes now (%v): run go test -run TestGolden -update, then make_tiff.py", path, err)
			continue
		}
		v, ok := views[name+".tif"]
		if !ok {
			t.Errorf("golden.json lacks %s", name)
			continue
		}
		a := tc.img.Array
		if !slices.Equal(v.Shape, a.Shape) || v.DType != a.DType().String() || v.SHA256 != sha256Hex(a) {
			t.Errorf("%s: libtiff read %v %s (SHA-256 %s), written %v %v (%s)", name, v.Shape, v.DType, v.SHA256, a.Shape, a.DType(), sha256Hex(a))
		}
		wantReaders := []string{"libtiff", "tifffile"}
		pred := 1
		if tc.opt.Predictor && tc.opt.Compression != None {
			pred = 2
			if a.DType() == nd.Float32 || a.DType() == nd.Float64 {
				pred = 3
			}
		}
		if tc.opt.Compression == LZW || pred == 3 {
			wantReaders = wantReaders[:1] // tifffile needs imagecodecs for these
		}
		wantComp := map[Compression]int{None: 1, Deflate: 8, LZW: 5}[tc.opt.Compression]
		wantPhoto := map[int]int{0: 1, 2: 1, 3: 2, 4: 2}[tc.img.Channels]
		wantExtra := map[int][]int{0: {}, 2: {2}, 3: {}, 4: {2}}[tc.img.Channels]
		if v.Compression != wantComp || v.Photometric != wantPhoto || v.Predictor != pred || v.Planar != 1 ||
			v.ResolutionUnit != resUnitNone || !slices.Equal(v.ExtraSamples, wantExtra) || !slices.Equal(v.Readers, wantReaders) {
			t.Errorf("%s: reference readers saw %+v; want compression %d, photometric %d, predictor %d, extra samples %v, read by %v",
				name, v, wantComp, wantPhoto, pred, wantExtra, wantReaders)
		}
		// And Read reads them back.
		got, err := readBytes(b)
		if err != nil || !sameArray(got.Array, a) || got.Channels != tc.img.Channels {
			t.Errorf("%s: Read gives %v, %v", name, got.Array.Shape, err)
		}
	}
}

// goldenDTypes are the dtypes of the golden files and write round trips
// (libtiff and tifffile read them back in testdata/make_tiff.py); the
// others round-trip in TestWriteNewDTypes.
var goldenDTypes = []nd.DType{nd.Uint8, nd.Uint16, nd.Int16, nd.Int32, nd.Float32, nd.Float64}

// TestWriteNewDTypes: int8, uint32, the 64-bit integers and float16 are
// written as samples of their own type and read back bit for bit.
func TestWriteNewDTypes(t *testing.T) {
	for _, dt := range []nd.DType{nd.Int8, nd.Uint32, nd.Int64, nd.Uint64, nd.Float16} {
		a, _ := nd.New(dt, 3, 4, 5)
		v := make([]float64, a.Len())
		for i := range v {
			v[i] = float64(i*7919%1000) - 300
		}
		nd.Store(a.Data, 0, 1, v)
		for _, c := range []Compression{None, Deflate, LZW} {
			b := writeBytes(t, Image{Array: a}, Options{Compression: c, Predictor: c != None})
			img, err := Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("%v %v: %v", dt, c, err)
			}
			if img.Array.DType() != dt || !bytes.Equal(img.Array.Bytes(), a.Bytes()) {
				t.Errorf("%v %v: read back %v", dt, c, img.Array.DType())
			}
		}
	}
}
