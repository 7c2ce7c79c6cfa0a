package imageio

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestDecodePNGFast: the fast decoder gives image/png's arrays, bit for
// bit, for every kind of file it takes — gray, gray 16-bit, RGB, RGBA and
// RGBA 16-bit, written by image/png at every compression level (so with
// every row filter its adaptive choice makes) and by our encoder — and
// declines (falling back to image/png) a damaged file, a palette and a
// transparent colour.
func TestDecodePNGFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	levels := []png.CompressionLevel{png.DefaultCompression, png.NoCompression, png.BestSpeed, png.BestCompression}
	fast := 0
	for n := range 120 {
		w, h := 1+rng.IntN(40), 1+rng.IntN(30)
		r := image.Rect(0, 0, w, h)
		var img image.Image
		switch n % 5 {
		case 0:
			g := image.NewGray(r)
			fillSmooth(rng, g.Pix)
			img = g
		case 1:
			g := image.NewGray16(r)
			fillSmooth(rng, g.Pix)
			img = g
		case 2, 3:
			c := image.NewNRGBA(r)
			fillSmooth(rng, c.Pix)
			if n%5 == 2 { // opaque: written as RGB
				for i := 3; i < len(c.Pix); i += 4 {
					c.Pix[i] = 255
				}
			}
			img = c
		case 4:
			c := image.NewNRGBA64(r)
			fillSmooth(rng, c.Pix)
			img = c
		}
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: levels[n%len(levels)]}
		if err := enc.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		want, err := decodePNG(data)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodePNGFast(data)
		if !ok {
			t.Errorf("case %d (%T %dx%d): declined", n, img, w, h)
			continue
		}
		fast++
		if !slices.Equal(got.Shape, want.Shape) || got.DType() != want.DType() || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("case %d (%T %dx%d, level %d): %v differs from image/png's %v", n, img, w, h, enc.CompressionLevel, got.Shape, want.Shape)
		}
		// A flipped byte in the image data: declined (a CRC), so that
		// image/png reports it.
		bad := bytes.Clone(data)
		bad[len(bad)-20] ^= 0x40
		if _, ok := decodePNGFast(bad); ok {
			t.Errorf("case %d: a damaged file decoded", n)
		}
	}
	// A palette and a transparent colour are image/png's.
	p := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var buf bytes.Buffer
	png.Encode(&buf, p)
	if _, ok := decodePNGFast(buf.Bytes()); ok {
		t.Error("a palette image took the fast path")
	}
	t.Logf("%d files decoded by the fast path", fast)
}

// fillSmooth fills b with a random walk, which the row filters compress
// (and so choose among), with some noise.
func fillSmooth(rng *rand.Rand, b []byte) {
	v := byte(rng.IntN(256))
	for i := range b {
		v += byte(rng.IntN(7)) - 3
		b[i] = v
		if rng.IntN(50) == 0 {
			b[i] = byte(rng.IntN(256))
		}
	}
}

// BenchmarkDecodePNG decodes a 2048² RGB photo-like PNG (written by our
// encoder at its default level) with the fast path and with image/png.
func BenchmarkDecodePNG(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, 2048, 2048))
	fillSmooth(rng, img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, ok := decodePNGFast(data); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("image-png", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodePNG(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestYCbCrToRGB checks the conversion ReadJPEG applies to what image/jpeg
// decodes (the files imageio/jpeg leaves to it: progressive and others)
// against image/draw's (into RGBA through FromImage, then R, G, B): every
// chroma subsampling, odd sizes and rectangles not at the origin.
func TestYCbCrToRGB(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	ratios := []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410}
	for _, ratio := range ratios {
		for _, r := range []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 17, 9), image.Rect(3, 5, 40, 30), image.Rect(0, 0, 300, 230)} {
			m := image.NewYCbCr(r, ratio)
			for _, p := range [][]uint8{m.Y, m.Cb, m.Cr} {
				for i := range p {
					p[i] = uint8(rng.IntN(256))
				}
			}
			want, err := FromImage(m)
			if err != nil {
				t.Fatal(err)
			}
			want = selectChannels(want, 0, 1, 2)
			got := ycbcrToRGB(m)
			if !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data.([]uint8), want.Data.([]uint8)) {
				t.Errorf("%v %v: the direct conversion differs from image/draw's", ratio, r)
			}
		}
	}
}

// jpegFixtures lists imageio/jpeg's OpenCV fixtures (see
// jpeg/testdata/gen.py): name, writer and quality of each.
func jpegFixtures(t *testing.T) [][3]string {
	b, err := os.ReadFile("jpeg/testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out [][3]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		out = append(out, [3]string{f[0], f[1], f[2]})
	}
	return out
}

// TestWriteJPEGOpenCVBytes: WriteJPEG writes the file cv2.imencode wrote
// from the same samples at the same quality (OpenCV's 4:2:0 files, gray
// and RGB, qualities 1 to 100), for uint8 arrays and, by nd.Store's rule
// to 8 bits, for other dtypes holding the same values.
func TestWriteJPEGOpenCVBytes(t *testing.T) {
	n := 0
	for _, fx := range jpegFixtures(t) {
		if fx[1] != "cv2" || strings.Contains(fx[0], "rst") {
			continue
		}
		q, _ := strconv.Atoi(fx[2])
		src, _, err := ReadFile("jpeg/testdata/"+fx[0]+".src.png", RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("jpeg/testdata/" + fx[0] + ".jpg")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJPEG(&got, src, q); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: %d bytes, cv2 wrote %d, or other bytes", fx[0], got.Len(), len(want))
		}
		// float32 and uint16 arrays of the same values: the same file.
		for _, dt := range []nd.DType{nd.Float32, nd.Uint16} {
			other, _ := nd.New(dt, src.Shape...)
			nd.Store(other.Data, 0, 1, src.Float64s())
			got.Reset()
			if err := WriteJPEG(&got, other, q); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s as %v: other bytes than cv2's", fx[0], dt)
			}
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d fixtures", n)
	}
}

// TestReadJPEGOpenCVSamples: ReadJPEG gives cv2.imdecode's samples for
// every fixture (restart intervals, 4:4:4, 4:2:2, 4:4:0 and RGB files
// included), and reads a progressive file (image/jpeg's).
func TestReadJPEGOpenCVSamples(t *testing.T) {
	for _, fx := range jpegFixtures(t) {
		got, _, err := ReadFile("jpeg/testdata/"+fx[0]+".jpg", RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := ReadFile("jpeg/testdata/"+fx[0]+".want.png", RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data.([]uint8), want.Data.([]uint8)) {
			t.Errorf("%s: %v differs from cv2's %v", fx[0], got.Shape, want.Shape)
		}
	}
	a, _, err := ReadFile("jpeg/testdata/progressive.jpg", RawOptions{})
	if err != nil || !slices.Equal(a.Shape, []int{24, 40, 3}) {
		t.Errorf("progressive: %v %v", a.Shape, err)
	}
}

// BenchmarkDecodePNGSmall decodes a 512² gray PNG written by our encoder,
// a folder run's file: per-file costs (the inflater, row buffers) show
// here that a 2048² image hides.
func BenchmarkDecodePNGSmall(b *testing.B) {
	var buf bytes.Buffer
	if err := WritePNG(&buf, benchPhoto(512, 512, 1)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := decodePNGFast(data); !ok {
			b.Fatal("declined")
		}
	}
}

// TestUnfilter: every filter on rows of every pixel size (1 to 8 bytes,
// lengths around the 8-byte steps) equals the specification's byte loop,
// the first row (no row above) included.
func TestUnfilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 40))
	ref := func(filter byte, cur, prev []byte, bpp int) {
		at := func(b []byte, i int) int {
			if i < 0 || b == nil {
				return 0
			}
			return int(b[i])
		}
		for i := range cur {
			a, b, c := at(cur, i-bpp), at(prev, i), at(prev, i-bpp)
			switch filter {
			case 1:
				cur[i] += byte(a)
			case 2:
				cur[i] += byte(b)
			case 3:
				cur[i] += byte((a + b) / 2)
			case 4:
				p := a + b - c
				pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
				switch {
				case pa <= pb && pa <= pc:
					cur[i] += byte(a)
				case pb <= pc:
					cur[i] += byte(b)
				default:
					cur[i] += byte(c)
				}
			}
		}
	}
	for _, bpp := range []int{1, 2, 3, 4, 6, 8} {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 64, 100} {
			w := n * bpp
			prev := make([]byte, w)
			for i := range prev {
				prev[i] = byte(rng.Uint32())
			}
			for filter := byte(0); filter <= 4; filter++ {
				for _, first := range []bool{false, true} {
					row := make([]byte, w)
					for i := range row {
						row[i] = byte(rng.Uint32())
					}
					p := prev
					if first {
						p = nil
					}
					want, got := bytes.Clone(row), bytes.Clone(row)
					ref(filter, want, p, bpp)
					if !unfilter(filter, got, p, bpp) {
						t.Fatalf("filter %d refused", filter)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("filter %d, %d-byte pixels, %d pixels, first row %v: differs from the specification's", filter, bpp, n, first)
					}
				}
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
