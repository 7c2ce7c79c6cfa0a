package imageio

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"reflect"

	"github.com/ndconv/ndconv/nd"
)

// FromImage returns the samples of img as an array, without rescaling:
//
//	*image.Gray              uint8  H×W
//	*image.Gray16            uint16 H×W
//	*image.RGBA, *image.NRGBA       uint8  H×W×4
//	*image.RGBA64, *image.NRGBA64   uint16 H×W×4
//
// Row 0, column 0 of the array is img.Bounds().Min. Channel values are
// those the image holds: an *image.RGBA is premultiplied by alpha, and its
// array is too (filtering premultiplied samples channel by channel is
// linear and so correct); an *image.NRGBA is not.
//
// Any other image (a JPEG's *image.YCbCr or *image.CMYK, a PNG's
// *image.Paletted, …) is converted through the color models to
// non-premultiplied RGBA: uint16 H×W×4 if its color model is one of the
// 16-bit models of image/color (Gray16, Alpha16, RGBA64, NRGBA64), uint8
// H×W×4 otherwise, as an *image.NRGBA or *image.NRGBA64 would hold it.
func FromImage(img image.Image) (nd.Array, error) {
	if img == nil {
		return nd.Array{}, &UnsupportedError{What: "image", Value: "nil"}
	}
	if v := reflect.ValueOf(img); v.Kind() == reflect.Pointer && v.IsNil() {
		return nd.Array{}, &UnsupportedError{What: "image", Value: fmt.Sprintf("nil %T", img)}
	}
	typ := fmt.Sprintf("%T", img)
	switch m := img.(type) {
	case *image.Gray:
		return pixToArray(m.Pix, m.Stride, m.Rect, 1, 1, typ)
	case *image.Gray16:
		return pixToArray(m.Pix, m.Stride, m.Rect, 1, 2, typ)
	case *image.RGBA:
		return pixToArray(m.Pix, m.Stride, m.Rect, 4, 1, typ)
	case *image.NRGBA:
		return pixToArray(m.Pix, m.Stride, m.Rect, 4, 1, typ)
	case *image.RGBA64:
		return pixToArray(m.Pix, m.Stride, m.Rect, 4, 2, typ)
	case *image.NRGBA64:
		return pixToArray(m.Pix, m.Stride, m.Rect, 4, 2, typ)
	}
	return fromImageGeneric(img)
}

// fromImageGeneric converts any image through its color model.
func fromImageGeneric(img image.Image) (nd.Array, error) {
	b := img.Bounds()
	r := image.Rect(0, 0, max(b.Dx(), 0), max(b.Dy(), 0))
	if _, err := nd.NumElements([]int{r.Dy(), r.Dx(), 4}); err != nil {
		return nd.Array{}, &UnsupportedError{What: "image size", Value: fmt.Sprintf("%dx%d", r.Dx(), r.Dy()), Detail: err.Error()}
	}
	switch img.ColorModel() {
	case color.Gray16Model, color.Alpha16Model, color.RGBA64Model, color.NRGBA64Model:
		dst := image.NewNRGBA64(r)
		draw.Draw(dst, r, img, b.Min, draw.Src)
		return pixToArray(dst.Pix, dst.Stride, r, 4, 2, "*image.NRGBA64")
	}
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		// An opaque image's premultiplied and straight samples are the
		// same, and image/draw has fast paths into *image.RGBA.
		dst := image.NewRGBA(r)
		draw.Draw(dst, r, img, b.Min, draw.Src)
		return pixToArray(dst.Pix, dst.Stride, r, 4, 1, "*image.RGBA")
	}
	dst := image.NewNRGBA(r)
	draw.Draw(dst, r, img, b.Min, draw.Src)
	return pixToArray(dst.Pix, dst.Stride, r, 4, 1, "*image.NRGBA")
}

// pixToArray copies the samples of an image's Pix (rows Stride bytes apart,
// starting at rect.Min; c samples of size bytes per pixel, 16-bit samples
// big-endian) into a new H×W or H×W×c array.
func pixToArray(pix []uint8, stride int, rect image.Rectangle, c, size int, typ string) (nd.Array, error) {
	h, w := max(rect.Dy(), 0), max(rect.Dx(), 0)
	shape := []int{h, w}
	if c > 1 {
		shape = append(shape, c)
	}
	n, err := nd.NumElements(shape)
	if err != nil {
		return nd.Array{}, &UnsupportedError{What: "image size", Value: fmt.Sprintf("%dx%d", w, h), Detail: err.Error()}
	}
	row := w * c * size
	if n > 0 && (stride < row || len(pix) < (h-1)*stride+row) {
		return nd.Array{}, &FormatError{Format: typ, Msg: fmt.Sprintf("Pix holds %d bytes with stride %d, its %dx%d bounds need more", len(pix), stride, w, h)}
	}
	if size == 1 {
		data := make([]uint8, n)
		for y := range h {
			copy(data[y*w*c:(y+1)*w*c], pix[y*stride:y*stride+row])
		}
		return nd.Array{Shape: shape, Data: data}, nil
	}
	data := make([]uint16, n)
	for y := range h {
		p := pix[y*stride : y*stride+row]
		d := data[y*w*c : (y+1)*w*c]
		for i := range d {
			d[i] = uint16(p[2*i])<<8 | uint16(p[2*i+1])
		}
	}
	return nd.Array{Shape: shape, Data: data}, nil
}

// ToImage returns a as an image with bounds starting at (0, 0). a must be
// H×W or H×W×C with C from 1 to 4: one channel is gray, two are gray and
// alpha, three are RGB (alpha opaque), four RGBA.
//
// The image has the Go type of like, if like is an *image.Gray or
// *image.Gray16 (a must then have one channel) or an *image.RGBA,
// *image.NRGBA, *image.RGBA64 or *image.NRGBA64 (any channel count; gray
// is copied to R, G and B); like's bounds and pixels do not matter. If like
// is nil or of another type, the type follows from a: one channel gives
// *image.Gray16 for uint16 arrays and *image.Gray otherwise; more channels
// give *image.NRGBA64 for uint16 arrays and *image.NRGBA otherwise.
//
// Values are not rescaled: each is converted to the image's sample type
// (uint8 or uint16) by nd.Store's rule, rounding half to even and
// saturating, NaN becoming 0. Into a premultiplied *image.RGBA or
// *image.RGBA64 each colour sample is then clamped to the pixel's alpha
// (filtering can push it above), so that the image stays valid.
func ToImage(a nd.Array, like image.Image) (image.Image, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("imageio: converting an array to an image: %w", err)
	}
	if a.DType().IsComplex() {
		return nil, complexError("", "", a.DType())
	}
	var h, w, c int
	switch {
	case len(a.Shape) == 2:
		h, w, c = a.Shape[0], a.Shape[1], 1
	case len(a.Shape) == 3 && a.Shape[2] >= 1 && a.Shape[2] <= 4:
		h, w, c = a.Shape[0], a.Shape[1], a.Shape[2]
	default:
		return nil, &UnsupportedError{What: "image shape", Value: fmt.Sprint(a.Shape), Detail: "an image is H×W or H×W×C with C from 1 to 4"}
	}
	r := image.Rect(0, 0, w, h)
	wide := a.DType() == nd.Uint16
	switch like.(type) {
	case *image.Gray, *image.Gray16:
		if c != 1 {
			return nil, &UnsupportedError{What: "image shape", Value: fmt.Sprint(a.Shape), Detail: fmt.Sprintf("a %T has one channel", like)}
		}
	case *image.RGBA, *image.NRGBA, *image.RGBA64, *image.NRGBA64:
	default:
		// Choose the type from the array; a typed nil selects the case below.
		switch {
		case c == 1 && wide:
			like = (*image.Gray16)(nil)
		case c == 1:
			like = (*image.Gray)(nil)
		case wide:
			like = (*image.NRGBA64)(nil)
		default:
			like = (*image.NRGBA)(nil)
		}
	}
	switch like.(type) {
	case *image.Gray:
		m := image.NewGray(r)
		copy(m.Pix, samples8(a))
		return m, nil
	case *image.Gray16:
		m := image.NewGray16(r)
		for i, v := range samples16(a) {
			m.Pix[2*i], m.Pix[2*i+1] = uint8(v>>8), uint8(v)
		}
		return m, nil
	case *image.RGBA:
		m := image.NewRGBA(r)
		fillRGBA8(m.Pix, samples8(a), c, true)
		return m, nil
	case *image.NRGBA:
		m := image.NewNRGBA(r)
		fillRGBA8(m.Pix, samples8(a), c, false)
		return m, nil
	case *image.RGBA64:
		m := image.NewRGBA64(r)
		fillRGBA16(m.Pix, samples16(a), c, true)
		return m, nil
	default:
		m := image.NewNRGBA64(r)
		fillRGBA16(m.Pix, samples16(a), c, false)
		return m, nil
	}
}

// samples8 returns a's values as uint8, converted by nd.Store.
func samples8(a nd.Array) []uint8 {
	if d, ok := a.Data.([]uint8); ok {
		return d
	}
	dst := make([]uint8, a.Len())
	convertSamples(dst, a)
	return dst
}

// samples16 returns a's values as uint16, converted by nd.Store.
func samples16(a nd.Array) []uint16 {
	if d, ok := a.Data.([]uint16); ok {
		return d
	}
	dst := make([]uint16, a.Len())
	convertSamples(dst, a)
	return dst
}

// convertSamples converts all of a's values into dst ([]uint8 or []uint16)
// a block at a time, so that the rounding rule is nd.Store's.
func convertSamples(dst any, a nd.Array) {
	var buf [4096]float64
	n := a.Len()
	for off := 0; off < n; off += len(buf) {
		b := buf[:min(len(buf), n-off)]
		nd.Load(b, a.Data, off)
		nd.Store(dst, off, 1, b)
	}
}

// fillRGBA8 writes pixels of c samples each into an 8-bit RGBA Pix with no
// padding between rows.
func fillRGBA8(pix []uint8, s []uint8, c int, premul bool) {
	for i := range len(pix) / 4 {
		r, g, b, al := rgbaSamples(s[i*c:i*c+c], 0xff, premul)
		q := pix[4*i : 4*i+4]
		q[0], q[1], q[2], q[3] = r, g, b, al
	}
}

// fillRGBA16 is fillRGBA8 for 16-bit images, whose samples are big-endian.
func fillRGBA16(pix []uint8, s []uint16, c int, premul bool) {
	for i := range len(pix) / 8 {
		r, g, b, al := rgbaSamples(s[i*c:i*c+c], 0xffff, premul)
		q := pix[8*i : 8*i+8]
		q[0], q[1], q[2], q[3] = uint8(r>>8), uint8(r), uint8(g>>8), uint8(g)
		q[4], q[5], q[6], q[7] = uint8(b>>8), uint8(b), uint8(al>>8), uint8(al)
	}
}

// rgbaSamples reads one pixel of len(p) samples — gray, gray and alpha,
// RGB or RGBA — as RGBA, opaque being full alpha; for a premultiplied image
// each colour is clamped to the alpha.
func rgbaSamples[T uint8 | uint16](p []T, opaque T, premul bool) (r, g, b, al T) {
	switch len(p) {
	case 1:
		r, g, b, al = p[0], p[0], p[0], opaque
	case 2:
		r, g, b, al = p[0], p[0], p[0], p[1]
	case 3:
		r, g, b, al = p[0], p[1], p[2], opaque
	default:
		r, g, b, al = p[0], p[1], p[2], p[3]
	}
	if premul {
		r, g, b = min(r, al), min(g, al), min(b, al)
	}
	return r, g, b, al
}
