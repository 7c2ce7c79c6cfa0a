package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestReadPNGFixtures reads PNGs of every colour type and depth written by
// an independent encoder (testdata/png/make_png.py) and compares the samples
// with the ones it recorded.
func TestReadPNGFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/png/in_*.png")
	if len(files) < 14 {
		t.Fatalf("found %d PNG fixtures; run testdata/png/make_png.py", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got, _, err := ReadFile(path, RawOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReadNPYFile(strings.TrimSuffix(path, ".png") + ".npy")
			if err != nil {
				t.Fatal(err)
			}
			if !equalArrays(got, want) {
				t.Errorf("read %v %v, want %v %v", got.DType(), got.Shape, want.DType(), want.Shape)
			}
		})
	}
}

func equalArrays(a, b nd.Array) bool {
	if a.DType() != b.DType() || !slices.Equal(a.Shape, b.Shape) {
		return false
	}
	switch d := a.Data.(type) {
	case []uint8:
		return slices.Equal(d, b.Data.([]uint8))
	case []uint16:
		return slices.Equal(d, b.Data.([]uint16))
	}
	return slices.Equal(a.Float64s(), b.Float64s())
}

// randomImage returns an H×W or H×W×c array of random samples.
func randomImage(rng *rand.Rand, h, w, c int, dt nd.DType) nd.Array {
	shape := []int{h, w, c}
	if c == 1 {
		shape = shape[:2]
	}
	a, _ := nd.New(dt, shape...)
	switch d := a.Data.(type) {
	case []uint8:
		for i := range d {
			d[i] = uint8(rng.IntN(256))
		}
	case []uint16:
		for i := range d {
			d[i] = uint16(rng.IntN(65536))
		}
	}
	return a
}

// TestPNGRoundTrip writes every colour type at both depths, including
// alpha that is fully opaque (which image/png alone would write as RGB),
// and reads back the same samples, shape and dtype.
func TestPNGRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []nd.DType{nd.Uint8, nd.Uint16} {
		for c := 1; c <= 4; c++ {
			for _, opaque := range []bool{false, true} {
				name := fmt.Sprintf("%v-%dch-opaque=%v", dt, c, opaque)
				t.Run(name, func(t *testing.T) {
					a := randomImage(rng, 13, 17, c, dt)
					if opaque && (c == 2 || c == 4) {
						setAlpha(a, c)
					}
					var buf bytes.Buffer
					if err := WritePNG(&buf, a); err != nil {
						t.Fatal(err)
					}
					got, err := ReadPNG(&buf)
					if err != nil {
						t.Fatal(err)
					}
					if !equalArrays(got, a) {
						t.Errorf("round trip changed the image: got %v %v", got.DType(), got.Shape)
					}
				})
			}
		}
	}
}

// setAlpha makes the last of c channels full.
func setAlpha(a nd.Array, c int) {
	switch d := a.Data.(type) {
	case []uint8:
		for i := c - 1; i < len(d); i += c {
			d[i] = 0xff
		}
	case []uint16:
		for i := c - 1; i < len(d); i += c {
			d[i] = 0xffff
		}
	}
}

// TestPNGGolden keeps golden PNGs written by WritePNG; make_png.py checks
// that PIL reads them as the samples beside them. -update rewrites them.
func TestPNGGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, g := range []struct {
		name string
		c    int
		dt   nd.DType
	}{{"gray8", 1, nd.Uint8}, {"gray16", 1, nd.Uint16}, {"ga8", 2, nd.Uint8}, {"rgb8", 3, nd.Uint8}, {"rgba8", 4, nd.Uint8}} {
		a := randomImage(rng, 6, 9, g.c, g.dt)
		var buf bytes.Buffer
		if err := WritePNG(&buf, a); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata/png", "golden_"+g.name+".png")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := WriteNPYFile(strings.TrimSuffix(path, ".png")+".npy", a); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(want, buf.Bytes()) {
			t.Errorf("%s differs from what WritePNG writes (%v); run go test ./imageio -run Golden -update, then make_png.py", path, err)
		}
	}
}

// TestWritePNGConverts writes float and signed arrays: floats become 8-bit
// and 16-bit ints, each by nd.Store's rule (half to even, saturated).
func TestWritePNGConverts(t *testing.T) {
	for _, tc := range []struct {
		in   nd.Array
		want nd.Array
	}{
		{nd.Array{Shape: []int{1, 6}, Data: []float32{-3, 0.5, 1.5, 254.5, 255.5, 1e9}},
			nd.Array{Shape: []int{1, 6}, Data: []uint8{0, 0, 2, 254, 255, 255}}},
		{nd.Array{Shape: []int{1, 4}, Data: []int32{-5, 7, 65535, 70000}},
			nd.Array{Shape: []int{1, 4}, Data: []uint16{0, 7, 65535, 65535}}},
		{nd.Array{Shape: []int{1, 2}, Data: []int16{-1, 300}},
			nd.Array{Shape: []int{1, 2}, Data: []uint16{0, 300}}},
	} {
		var buf bytes.Buffer
		if err := WritePNG(&buf, tc.in); err != nil {
			t.Fatal(err)
		}
		got, err := ReadPNG(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !equalArrays(got, tc.want) {
			t.Errorf("%v: read back %v, want %v", tc.in.Data, got.Data, tc.want.Data)
		}
	}
}

func TestWritePNGErrors(t *testing.T) {
	for _, a := range []nd.Array{
		{Shape: []int{4}, Data: make([]uint8, 4)},
		{Shape: []int{2, 2, 5}, Data: make([]uint8, 20)},
		{Shape: []int{2, 2, 2, 2}, Data: make([]uint8, 16)},
		{Shape: []int{0, 3}, Data: []uint8{}},
	} {
		err := WritePNG(&bytes.Buffer{}, a)
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("shape %v: %v, want an UnsupportedError", a.Shape, err)
		}
	}
}

// pngWithIHDR returns a PNG whose header claims width × height and has one
// tiny IDAT, to test what readers do before decoding pixel data.
func pngWithIHDR(width, height uint32, depth, colorType byte) []byte {
	var b bytes.Buffer
	b.Write(pngSignature)
	chunk := func(kind string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(kind)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, width)
	binary.BigEndian.PutUint32(ihdr[4:], height)
	ihdr[8], ihdr[9] = depth, colorType
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// TestReadPNGBad feeds corrupt, truncated and lying files: each must be a
// typed error, and a huge claimed size must fail before anything is
// allocated for it.
func TestReadPNGBad(t *testing.T) {
	good, _ := os.ReadFile("testdata/png/in_rgb8.png")
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x55
	cases := map[string][]byte{
		"empty":       nil,
		"not png":     []byte("GIF89a......................................"),
		"truncated":   good[:len(good)/2],
		"header only": good[:33],
		"bad crc":     flipped,
		"huge claim":  pngWithIHDR(200000, 200000, 8, pngRGBA),
		"bad type":    pngWithIHDR(4, 4, 8, 5),
		"zero width":  pngWithIHDR(0, 4, 8, pngGray),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadPNG(bytes.NewReader(data))
			runtime.ReadMemStats(&after)
			var fe *FormatError
			var ue *UnsupportedError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("got %v (%T), want a FormatError or UnsupportedError", err, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MB for a %d-byte file", grew>>20, len(data))
			}
		})
	}
}

// TestReadJPEG compares with PIL's decoding (decoders may differ by a few
// levels) and round-trips through WriteJPEG.
func TestReadJPEG(t *testing.T) {
	for _, name := range []string{"photo.jpg", "gray.jpg"} {
		path := filepath.Join("testdata/png", name)
		got, meta, err := ReadFile(path, RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadNPYFile(path + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Shape, want.Shape) || got.DType() != nd.Uint8 {
			t.Fatalf("%s: %v %v, want uint8 %v", name, got.DType(), got.Shape, want.Shape)
		}
		if wantC := 0; len(want.Shape) == 3 && meta.Channels != want.Shape[2] || len(want.Shape) == 2 && meta.Channels != wantC {
			t.Errorf("%s: meta %+v", name, meta)
		}
		if d := maxDiff(got, want); d > 3 {
			t.Errorf("%s: differs from PIL by up to %v levels", name, d)
		}
	}
	// image/jpeg always subsamples chroma 4:2:0, so the round trip is
	// checked on smooth images, where that loses little.
	for c := 1; c <= 3; c += 2 {
		a, _ := nd.New(nd.Uint8, 32, 48, c)
		d := a.Data.([]uint8)
		for i := range d {
			y, x, ch := i/(48*c), i/c%48, i%c
			d[i] = uint8(40 + 2*x + y + 20*ch)
		}
		var buf bytes.Buffer
		if err := WriteJPEG(&buf, a, 100); err != nil {
			t.Fatal(err)
		}
		again, err := ReadJPEG(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if c == 1 {
			a.Shape = a.Shape[:2]
		}
		if !slices.Equal(again.Shape, a.Shape) {
			t.Fatalf("round trip of %v gave %v", a.Shape, again.Shape)
		}
		if d := maxDiff(again, a); d > 4 {
			t.Errorf("%d channels: quality-100 round trip changed samples by %v", c, d)
		}
	}
}

func maxDiff(a, b nd.Array) float64 {
	x, y := a.Float64s(), b.Float64s()
	m := 0.0
	for i := range x {
		m = max(m, x[i]-y[i], y[i]-x[i])
	}
	return m
}

func TestJPEGErrors(t *testing.T) {
	good, _ := os.ReadFile("testdata/png/photo.jpg")
	for name, data := range map[string][]byte{"empty": nil, "truncated": good[:len(good)/3], "garbage": []byte("\xff\xd8\xff\xc0 nonsense")} {
		_, err := ReadJPEG(bytes.NewReader(data))
		var fe *FormatError
		var ue *UnsupportedError
		if !errors.As(err, &fe) && !errors.As(err, &ue) {
			t.Errorf("%s: got %v (%T), want a typed error", name, err, err)
		}
	}
	for _, a := range []nd.Array{
		{Shape: []int{2, 2, 4}, Data: make([]uint8, 16)},
		{Shape: []int{2, 2, 2}, Data: make([]uint8, 8)},
	} {
		if err := WriteJPEG(&bytes.Buffer{}, a, 90); err == nil {
			t.Errorf("wrote a JPEG with shape %v", a.Shape)
		}
	}
	if err := WriteJPEG(&bytes.Buffer{}, nd.Array{Shape: []int{2, 2}, Data: make([]uint8, 4)}, 101); err == nil {
		t.Error("quality 101 accepted")
	}
}

// TestStdPNGReadsOurs decodes what WritePNG writes with image/png too.
func TestStdPNGReadsOurs(t *testing.T) {
	a := randomImage(rand.New(rand.NewPCG(3, 3)), 5, 6, 2, nd.Uint16)
	var buf bytes.Buffer
	if err := WritePNG(&buf, a); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := img.(*image.NRGBA64)
	if !ok {
		t.Fatalf("image/png decodes a %T", img)
	}
	s := a.Data.([]uint16)
	for i := range 30 {
		c := m.NRGBA64At(i%6, i/6)
		if c.R != s[2*i] || c.G != s[2*i] || c.A != s[2*i+1] {
			t.Fatalf("pixel %d: %v, want gray %d alpha %d", i, c, s[2*i], s[2*i+1])
		}
	}
}

func pngSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, name := range []string{"in_gray1", "in_gray16", "in_ga8", "in_rgb16", "in_rgba8", "in_palette_trns", "in_gray_trns"} {
		b, err := os.ReadFile(filepath.Join("testdata/png", name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		seeds["seed-"+strings.TrimPrefix(name, "in_")] = b
		if name == "in_rgb16" {
			seeds["seed-truncated"] = b[:len(b)-20]
		}
	}
	seeds["seed-huge-claim"] = pngWithIHDR(1<<30, 1<<30, 16, pngRGBA)
	return seeds
}

func jpegSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, name := range []string{"photo.jpg", "gray.jpg"} {
		b, err := os.ReadFile(filepath.Join("testdata/png", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds["seed-"+strings.TrimSuffix(name, ".jpg")] = b
	}
	// Files of imageio/jpeg's subset (restart intervals, 4:2:2, 4:4:0, an
	// RGB file), a progressive one (image/jpeg's), and one cut in its scan.
	for name, file := range map[string]string{
		"rst": "cv2_rst3_rgb_50x70", "422": "pil_422_5x6", "440": "ours_440_3x2",
		"adobe-rgb": "edit_adobe_rgb", "progressive": "progressive", "gray-q1": "cv2_gray_16x16_random_q1",
	} {
		b, err := os.ReadFile(filepath.Join("jpeg/testdata", file+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		seeds["seed-"+name] = b
		if name == "rst" {
			seeds["seed-cut-scan"] = b[:len(b)*2/3]
		}
		if name == "gray-q1" {
			// Three codes of length 1 in the first DHT: a table whose
			// codes overflow (once a panic, found by fuzzing).
			bad := bytes.Clone(b)
			bad[bytes.Index(bad, []byte{0xff, 0xc4})+5] = 3
			seeds["seed-bad-dht"] = bad
		}
	}
	return seeds
}

// FuzzReadPNG checks that no input makes ReadPNG panic or return an untyped
// error, and that what it reads is written and read back unchanged.
func FuzzReadPNG(f *testing.F) {
	for _, b := range pngSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadPNG(bytes.NewReader(data))
		if err != nil {
			checkTypedError(t, err)
			return
		}
		var buf bytes.Buffer
		if err := WritePNG(&buf, a); err != nil {
			if a.Len() == 0 {
				return
			}
			t.Fatalf("read %v %v but cannot write it: %v", a.DType(), a.Shape, err)
		}
		b, err := ReadPNG(&buf)
		if err != nil || !equalArrays(a, b) {
			t.Fatalf("round trip of %v %v: %v", a.DType(), a.Shape, err)
		}
	})
}

// FuzzReadJPEG checks that no input makes ReadJPEG panic or return an
// untyped error.
func FuzzReadJPEG(f *testing.F) {
	for _, b := range jpegSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadJPEG(bytes.NewReader(data))
		if err != nil {
			checkTypedError(t, err)
			return
		}
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

func checkTypedError(t *testing.T, err error) {
	var fe *FormatError
	var ue *UnsupportedError
	if !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
	if !strings.HasPrefix(err.Error(), "imageio: ") {
		t.Fatalf("error %q lacks the package prefix", err)
	}
}
