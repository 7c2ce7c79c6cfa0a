package imageio

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// channels returns the samples of one pixel of a directly mapped image
// type, read through its typed accessor, as FromImage should store them.
func channels(img image.Image, x, y int) []float64 {
	switch m := img.(type) {
	case *image.Gray:
		return []float64{float64(m.GrayAt(x, y).Y)}
	case *image.Gray16:
		return []float64{float64(m.Gray16At(x, y).Y)}
	case *image.RGBA:
		c := m.RGBAAt(x, y)
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case *image.NRGBA:
		c := m.NRGBAAt(x, y)
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case *image.RGBA64:
		c := m.RGBA64At(x, y)
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case *image.NRGBA64:
		c := m.NRGBA64At(x, y)
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	}
	panic(fmt.Sprintf("channels: %T", img))
}

// randImages makes one image of each directly mapped type with bounds r
// and random valid pixels (premultiplied colour ≤ alpha).
func randImages(rng *rand.Rand, r image.Rectangle) []image.Image {
	u8 := func() uint8 { return uint8(rng.UintN(256)) }
	u16 := func() uint16 { return uint16(rng.UintN(65536)) }
	gray, gray16 := image.NewGray(r), image.NewGray16(r)
	rgba, nrgba := image.NewRGBA(r), image.NewNRGBA(r)
	rgba64, nrgba64 := image.NewRGBA64(r), image.NewNRGBA64(r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			gray.SetGray(x, y, color.Gray{u8()})
			gray16.SetGray16(x, y, color.Gray16{u16()})
			a := u8()
			rgba.SetRGBA(x, y, color.RGBA{min(u8(), a), min(u8(), a), min(u8(), a), a})
			nrgba.SetNRGBA(x, y, color.NRGBA{u8(), u8(), u8(), u8()})
			a16 := u16()
			rgba64.SetRGBA64(x, y, color.RGBA64{min(u16(), a16), min(u16(), a16), min(u16(), a16), a16})
			nrgba64.SetNRGBA64(x, y, color.NRGBA64{u16(), u16(), u16(), u16()})
		}
	}
	return []image.Image{gray, gray16, rgba, nrgba, rgba64, nrgba64}
}

// checkArray checks that a holds img's samples, row 0 at Bounds().Min.
func checkArray(t *testing.T, img image.Image, a nd.Array) {
	t.Helper()
	b := img.Bounds()
	c := len(channels(img, b.Min.X, b.Min.Y))
	want := []int{b.Dy(), b.Dx()}
	if c > 1 {
		want = append(want, c)
	}
	if !slices.Equal(a.Shape, want) {
		t.Fatalf("%T: shape %v, want %v", img, a.Shape, want)
	}
	wantType := nd.Uint8
	switch img.(type) {
	case *image.Gray16, *image.RGBA64, *image.NRGBA64:
		wantType = nd.Uint16
	}
	if a.DType() != wantType {
		t.Fatalf("%T: dtype %v, want %v", img, a.DType(), wantType)
	}
	v := a.Float64s()
	for y := range b.Dy() {
		for x := range b.Dx() {
			got := v[(y*b.Dx()+x)*c : (y*b.Dx()+x+1)*c]
			if w := channels(img, b.Min.X+x, b.Min.Y+y); !slices.Equal(got, w) {
				t.Fatalf("%T: pixel (%d, %d) = %v, want %v", img, x, y, got, w)
			}
		}
	}
}

func TestImageRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for _, r := range []image.Rectangle{image.Rect(0, 0, 7, 5), image.Rect(3, -2, 10, 5), image.Rect(0, 0, 1, 1), image.Rect(2, 2, 2, 6)} {
		for _, img := range randImages(rng, r) {
			a, err := FromImage(img)
			if err != nil {
				t.Fatalf("%T %v: %v", img, r, err)
			}
			checkArray(t, img, a)
			back, err := ToImage(a, img)
			if err != nil {
				t.Fatalf("%T %v: %v", img, r, err)
			}
			if reflect.TypeOf(back) != reflect.TypeOf(img) {
				t.Fatalf("ToImage made a %T, want %T", back, img)
			}
			if back.Bounds() != image.Rect(0, 0, r.Dx(), r.Dy()) {
				t.Fatalf("%T: bounds %v", back, back.Bounds())
			}
			for y := range r.Dy() {
				for x := range r.Dx() {
					if g, w := channels(back, x, y), channels(img, r.Min.X+x, r.Min.Y+y); !slices.Equal(g, w) {
						t.Fatalf("%T: pixel (%d, %d) = %v, want %v", img, x, y, g, w)
					}
				}
			}
		}
	}
}

// TestFromSubImage checks that a sub-image (bounds not at 0, Pix offset,
// stride wider than a row) reads as the crop of the whole image.
func TestFromSubImage(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	full := image.Rect(-3, 4, 13, 15)
	sub := image.Rect(1, 6, 8, 14)
	for _, img := range randImages(rng, full) {
		si := img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(sub)
		a, err := FromImage(si)
		if err != nil {
			t.Fatal(err)
		}
		checkArray(t, si, a)
		whole, _ := FromImage(img)
		c := 1
		if len(whole.Shape) == 3 {
			c = 4
		}
		wv, sv := whole.Float64s(), a.Float64s()
		for y := range sub.Dy() {
			for x := range sub.Dx() {
				fy, fx := sub.Min.Y-full.Min.Y+y, sub.Min.X-full.Min.X+x
				for k := range c {
					if sv[(y*sub.Dx()+x)*c+k] != wv[(fy*full.Dx()+fx)*c+k] {
						t.Fatalf("%T: sub-image pixel (%d, %d) differs from the whole", img, x, y)
					}
				}
			}
		}
	}
}

func TestToImageChooses(t *testing.T) {
	cases := []struct {
		dt    nd.DType
		shape []int
		want  image.Image
	}{
		{nd.Uint8, []int{3, 4}, &image.Gray{}},
		{nd.Uint8, []int{3, 4, 1}, &image.Gray{}},
		{nd.Uint16, []int{3, 4}, &image.Gray16{}},
		{nd.Uint8, []int{3, 4, 4}, &image.NRGBA{}},
		{nd.Uint16, []int{3, 4, 4}, &image.NRGBA64{}},
		{nd.Uint8, []int{3, 4, 3}, &image.NRGBA{}},
		{nd.Uint16, []int{3, 4, 2}, &image.NRGBA64{}},
		{nd.Float32, []int{3, 4}, &image.Gray{}},
		{nd.Float64, []int{3, 4, 3}, &image.NRGBA{}},
		{nd.Int16, []int{3, 4}, &image.Gray{}},
		{nd.Int32, []int{0, 4, 3}, &image.NRGBA{}},
	}
	for _, c := range cases {
		a, _ := nd.New(c.dt, c.shape...)
		for _, like := range []image.Image{nil, image.NewYCbCr(image.Rect(0, 0, 1, 1), image.YCbCrSubsampleRatio420)} {
			img, err := ToImage(a, like)
			if err != nil {
				t.Fatalf("%v %v: %v", c.dt, c.shape, err)
			}
			if reflect.TypeOf(img) != reflect.TypeOf(c.want) {
				t.Fatalf("%v %v like %T: made %T, want %T", c.dt, c.shape, like, img, c.want)
			}
			if img.Bounds() != image.Rect(0, 0, c.shape[1], c.shape[0]) {
				t.Fatalf("%v %v: bounds %v", c.dt, c.shape, img.Bounds())
			}
		}
	}
}

// TestToImageChannels checks gray, gray+alpha and RGB arrays in colour
// images, and the clamp of premultiplied colour to alpha.
func TestToImageChannels(t *testing.T) {
	// One pixel per case: samples in, RGBA out for NRGBA and for RGBA.
	cases := []struct {
		in          []uint8
		nrgba, rgba color.Color
	}{
		{[]uint8{100}, color.NRGBA{100, 100, 100, 255}, color.RGBA{100, 100, 100, 255}},
		{[]uint8{100, 60}, color.NRGBA{100, 100, 100, 60}, color.RGBA{60, 60, 60, 60}},
		{[]uint8{10, 20, 30}, color.NRGBA{10, 20, 30, 255}, color.RGBA{10, 20, 30, 255}},
		{[]uint8{10, 200, 30, 40}, color.NRGBA{10, 200, 30, 40}, color.RGBA{10, 40, 30, 40}},
	}
	for _, c := range cases {
		shape := []int{1, 1, len(c.in)}
		a, _ := nd.FromSlice(c.in, shape...)
		n, err := ToImage(a, &image.NRGBA{})
		if err != nil {
			t.Fatal(err)
		}
		if got := n.(*image.NRGBA).NRGBAAt(0, 0); got != c.nrgba {
			t.Errorf("%v as NRGBA: %v, want %v", c.in, got, c.nrgba)
		}
		r, err := ToImage(a, &image.RGBA{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.(*image.RGBA).RGBAAt(0, 0); got != c.rgba {
			t.Errorf("%v as RGBA: %v, want %v", c.in, got, c.rgba)
		}
		// The 16-bit types hold the same numbers, unscaled.
		r64, err := ToImage(a, &image.RGBA64{})
		if err != nil {
			t.Fatal(err)
		}
		w := c.rgba.(color.RGBA)
		want64 := color.RGBA64{uint16(w.R), uint16(w.G), uint16(w.B), uint16(w.A)}
		if w.A == 255 {
			want64.A = 0xffff
		}
		if got := r64.(*image.RGBA64).RGBA64At(0, 0); got != want64 {
			t.Errorf("%v as RGBA64: %v, want %v", c.in, got, want64)
		}
	}
	// Premultiplied 16-bit: colour above alpha is clamped.
	a, _ := nd.FromSlice([]uint16{60000, 100, 50000, 40000}, 1, 1, 4)
	m, err := ToImage(a, &image.RGBA64{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.(*image.RGBA64).RGBA64At(0, 0), (color.RGBA64{40000, 100, 40000, 40000}); got != want {
		t.Errorf("RGBA64 clamp: %v, want %v", got, want)
	}
}

// TestToImageRounding checks that float and wide integer arrays round half
// to even and saturate as nd.Store does.
func TestToImageRounding(t *testing.T) {
	in := []float64{2.5, 3.5, -1, 300, math.NaN(), 254.5, 0.5, 1.5, math.Inf(1), math.Inf(-1), 127.49999, -0.5}
	want8 := []uint8{2, 4, 0, 255, 0, 254, 0, 2, 255, 0, 127, 0}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		a, _ := nd.New(dt, 1, len(in))
		nd.Store(a.Data, 0, 1, in)
		img, err := ToImage(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := img.(*image.Gray).Pix; !slices.Equal(got, want8) {
			t.Errorf("%v to Gray: %v, want %v", dt, got, want8)
		}
	}
	in16 := []float64{65535.5, 70000, -3, 1000.5, 1001.5, math.NaN()}
	want16 := []uint16{65535, 65535, 0, 1000, 1002, 0}
	a, _ := nd.New(nd.Float64, 1, len(in16))
	nd.Store(a.Data, 0, 1, in16)
	img, err := ToImage(a, &image.Gray16{})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want16 {
		if got := img.(*image.Gray16).Gray16At(i, 0).Y; got != w {
			t.Errorf("%v to Gray16: %d, want %d", in16[i], got, w)
		}
	}
	// Integers: int32 and uint16 into 8 bits saturate.
	i32, _ := nd.FromSlice([]int32{-5, 0, 255, 256, 1 << 30}, 1, 5)
	img, _ = ToImage(i32, &image.Gray{})
	if got := img.(*image.Gray).Pix; !slices.Equal(got, []uint8{0, 0, 255, 255, 255}) {
		t.Errorf("int32 to Gray: %v", got)
	}
	u16, _ := nd.FromSlice([]uint16{3, 255, 256, 65535}, 1, 1, 4)
	img, _ = ToImage(u16, &image.NRGBA{})
	if got := img.(*image.NRGBA).Pix; !slices.Equal(got, []uint8{3, 255, 255, 255}) {
		t.Errorf("uint16 to NRGBA: %v", got)
	}
}

func TestToImageErrors(t *testing.T) {
	cases := []struct {
		a    nd.Array
		like image.Image
		msg  string
	}{
		{nd.Array{Shape: []int{2, 2, 5}, Data: make([]uint8, 20)}, nil, "[2 2 5]"},
		{nd.Array{Shape: []int{2, 2, 0}, Data: make([]uint8, 0)}, nil, "[2 2 0]"},
		{nd.Array{Shape: []int{2, 2, 2, 2}, Data: make([]uint8, 16)}, nil, "[2 2 2 2]"},
		{nd.Array{Shape: []int{4}, Data: make([]uint8, 4)}, nil, "[4]"},
		{nd.Array{Shape: []int{}, Data: make([]uint8, 1)}, nil, "[]"},
		{nd.Array{Shape: []int{2, 2, 3}, Data: make([]uint8, 12)}, &image.Gray{}, "*image.Gray has one channel"},
		{nd.Array{Shape: []int{2, 2, 4}, Data: make([]uint16, 16)}, &image.Gray16{}, "*image.Gray16 has one channel"},
	}
	for _, c := range cases {
		_, err := ToImage(c.a, c.like)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want an *UnsupportedError naming %q", c.a.Shape, err, c.msg)
		}
	}
	var ae *nd.ArgumentError
	if _, err := ToImage(nd.Array{Shape: []int{2, 2}, Data: make([]uint8, 3)}, nil); !errors.As(err, &ae) {
		t.Errorf("inconsistent array: %v", err)
	}
}

// TestFromImageGeneric checks the conversion of other image types through
// the color models.
func TestFromImageGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	r := image.Rect(-2, 3, 9, 10)
	ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = uint8(rng.UintN(256))
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = uint8(rng.UintN(256)), uint8(rng.UintN(256))
	}
	pal := make(color.Palette, 256)
	copy(pal, palette.Plan9)
	pal[7] = color.NRGBA{200, 100, 50, 128}
	pal[8] = color.Alpha{0}
	pm := image.NewPaletted(r, pal)
	for i := range pm.Pix {
		pm.Pix[i] = uint8(rng.UintN(16))
	}
	cmyk := image.NewCMYK(r)
	for i := range cmyk.Pix {
		cmyk.Pix[i] = uint8(rng.UintN(256))
	}
	alpha := image.NewAlpha(r)
	alpha16 := image.NewAlpha16(r)
	for i := range alpha.Pix {
		alpha.Pix[i] = uint8(rng.UintN(256))
	}
	for i := range alpha16.Pix {
		alpha16.Pix[i] = uint8(rng.UintN(256))
	}
	nycc := image.NewNYCbCrA(r, image.YCbCrSubsampleRatio444)
	for i := range nycc.Y {
		nycc.Y[i], nycc.Cb[i], nycc.Cr[i], nycc.A[i] = uint8(rng.UintN(256)), uint8(rng.UintN(256)), uint8(rng.UintN(256)), uint8(rng.UintN(256))
	}
	for _, img := range []image.Image{ycc, pm, cmyk, alpha, alpha16, nycc, ycc.SubImage(image.Rect(0, 4, 5, 9)), image.NewUniform(color.Gray{9})} {
		if u, ok := img.(*image.Uniform); ok {
			img = uniformBounded{u, image.Rect(0, 0, 3, 2)}
		}
		a, err := FromImage(img)
		if err != nil {
			t.Fatalf("%T: %v", img, err)
		}
		b := img.Bounds()
		sixteen := img.ColorModel() == color.Alpha16Model
		if want := []int{b.Dy(), b.Dx(), 4}; !slices.Equal(a.Shape, want) {
			t.Fatalf("%T: shape %v, want %v", img, a.Shape, want)
		}
		if (a.DType() == nd.Uint16) != sixteen {
			t.Fatalf("%T: dtype %v", img, a.DType())
		}
		v := a.Float64s()
		for y := range b.Dy() {
			for x := range b.Dx() {
				var want []float64
				if sixteen {
					c := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
					want = []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
				} else {
					c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
					want = []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
				}
				if got := v[(y*b.Dx()+x)*4 : (y*b.Dx()+x+1)*4]; !slices.Equal(got, want) {
					t.Fatalf("%T: pixel (%d, %d) = %v, want %v", img, x, y, got, want)
				}
			}
		}
	}
}

// uniformBounded is an image type FromImage does not know.
type uniformBounded struct {
	*image.Uniform
	r image.Rectangle
}

func (u uniformBounded) Bounds() image.Rectangle { return u.r }

func TestFromImageBad(t *testing.T) {
	cases := []image.Image{
		nil,
		(*image.Gray)(nil),
		(*image.NRGBA64)(nil),
		&image.Gray{Pix: make([]uint8, 5), Stride: 3, Rect: image.Rect(0, 0, 3, 2)},
		&image.Gray{Pix: make([]uint8, 100), Stride: 2, Rect: image.Rect(0, 0, 3, 2)},
		&image.RGBA64{Pix: make([]uint8, 8), Stride: 8, Rect: image.Rect(0, 0, 1, 2)},
		&image.NRGBA{Rect: image.Rect(0, 0, 1<<20, 1<<20)},
	}
	for _, img := range cases {
		_, err := FromImage(img)
		var fe *FormatError
		var ue *UnsupportedError
		if err == nil || !(errors.As(err, &fe) || errors.As(err, &ue)) || !strings.HasPrefix(err.Error(), "imageio: ") {
			t.Errorf("%T: %v, want a typed error", img, err)
		}
	}
	// Empty and inverted bounds are 0×0, not an error.
	for _, img := range []image.Image{&image.Gray{}, &image.RGBA{Rect: image.Rectangle{image.Pt(5, 5), image.Pt(2, 2)}}} {
		a, err := FromImage(img)
		if err != nil || a.Len() != 0 {
			t.Errorf("%T: %v %v", img, a.Shape, err)
		}
	}
}
