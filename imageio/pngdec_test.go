package imageio

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"slices"
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

// TestYCbCrToRGB checks ReadJPEG's direct conversion against the path it
// replaced (image/draw into RGBA through FromImage, then R, G, B): every
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

// TestWriteJPEGSameBytes checks that WriteJPEG's direct RGB → YCbCr path
// writes the same file as image/jpeg given the RGBA image (the path it
// replaced), at several qualities and sizes (edges of partial blocks).
func TestWriteJPEGSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	for _, hw := range [][2]int{{1, 1}, {7, 17}, {16, 16}, {33, 50}, {120, 97}} {
		h, w := hw[0], hw[1]
		d := make([]uint8, h*w*3)
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range d {
			d[i] = uint8(rng.IntN(256))
			m.Pix[i/3*4+i%3] = d[i]
		}
		for i := 3; i < len(m.Pix); i += 4 {
			m.Pix[i] = 255
		}
		for _, q := range []int{1, 50, 95, 100} {
			var got, want bytes.Buffer
			if err := WriteJPEG(&got, nd.Array{Shape: []int{h, w, 3}, Data: d}, q); err != nil {
				t.Fatal(err)
			}
			if err := jpeg.Encode(&want, m, &jpeg.Options{Quality: q}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%dx%d quality %d: %d bytes, image/jpeg from RGBA %d, or other bytes", w, h, q, got.Len(), want.Len())
			}
		}
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
