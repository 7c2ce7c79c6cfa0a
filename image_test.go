package ndconv_test

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv"
)

// TestImageChannels: filtering a colour image equals filtering each of its
// channels alone as a grey image, for every supported image type.
func TestImageChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const w, h = 9, 7
	k := ndconv.NewKernel([]int{3, 3}, []float64{1, 2, 1, 2, 4, 2, 1, 2, 1})
	for i := range k.Weights {
		k.Weights[i] /= 16
	}
	opt := ndconv.Options{Border: ndconv.Mirror}
	rgba64 := image.NewRGBA64(image.Rect(0, 0, w, h))
	nrgba := image.NewNRGBA(image.Rect(0, 0, w, h))
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	gray16 := image.NewGray16(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint16(rng.IntN(65536))
			rgba64.SetRGBA64(x, y, color.RGBA64{uint16(rng.IntN(int(a) + 1)), uint16(rng.IntN(int(a) + 1)), uint16(rng.IntN(int(a) + 1)), a})
			nrgba.SetNRGBA(x, y, color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))})
			rgba.SetRGBA(x, y, color.RGBA{0, uint8(rng.IntN(128)), 0, 128})
			gray16.SetGray16(x, y, color.Gray16{uint16(rng.IntN(65536))})
		}
	}
	for _, img := range []image.Image{rgba64, nrgba, rgba, gray16} {
		out, err := ndconv.CorrelateImage(ctx, img, opt, k)
		if err != nil {
			t.Fatalf("%T: %v", img, err)
		}
		if out.Bounds() != img.Bounds() {
			t.Fatalf("%T: bounds %v", img, out.Bounds())
		}
		for c := range 4 {
			plane := image.NewGray16(img.Bounds())
			for y := range h {
				for x := range w {
					plane.SetGray16(x, y, color.Gray16{channel(img, x, y, c)})
				}
			}
			want, err := ndconv.CorrelateImage(ctx, plane, opt, k)
			if err != nil {
				t.Fatal(err)
			}
			for y := range h {
				for x := range w {
					if got, w := channel(out, x, y, c), want.(*image.Gray16).Gray16At(x, y).Y; got != w {
						t.Fatalf("%T channel %d at (%d,%d): %d, per-channel filtering gives %d", img, c, x, y, got, w)
					}
				}
			}
			if _, ok := img.(*image.Gray16); ok {
				break
			}
		}
	}
}

// channel returns sample c of the pixel as the image stores it.
func channel(img image.Image, x, y, c int) uint16 {
	switch m := img.(type) {
	case *image.RGBA64:
		p := m.RGBA64At(x, y)
		return [4]uint16{p.R, p.G, p.B, p.A}[c]
	case *image.NRGBA:
		p := m.NRGBAAt(x, y)
		return uint16([4]uint8{p.R, p.G, p.B, p.A}[c])
	case *image.RGBA:
		p := m.RGBAAt(x, y)
		return uint16([4]uint8{p.R, p.G, p.B, p.A}[c])
	case *image.Gray16:
		return m.Gray16At(x, y).Y
	}
	panic("unexpected image type")
}
