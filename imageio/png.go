package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"

	"github.com/ndconv/ndconv/nd"
)

// PNG colour types (PNG specification §11.2.2).
const (
	pngGray      = 0
	pngRGB       = 2
	pngPalette   = 3
	pngGrayAlpha = 4
	pngRGBA      = 6
)

// pngSamples is the samples per pixel of each colour type.
var pngSamples = [8]int{pngGray: 1, pngRGB: 3, pngPalette: 1, pngGrayAlpha: 2, pngRGBA: 4}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// ReadPNG decodes a PNG into an H×W array (gray) or an H×W×C array with the
// samples the file stores: 2 for gray and alpha, 3 for RGB, 4 for RGBA. A
// 16-bit file gives uint16 samples, any other depth uint8 (1-, 2- and 4-bit
// gray scaled to 0–255 as image/png does). A palette image gives its
// palette's colours: RGB, or RGBA when the palette has transparency; a gray
// or RGB image with a transparent colour (tRNS) gains an alpha channel.
//
// The signature and IHDR are checked before anything else is read, and the
// chunks after them are read up to IEND (never beyond) within what the
// image IHDR announces can take, so that a stream that is not a PNG, or
// does not end, is refused with bounded memory.
func ReadPNG(r io.Reader) (nd.Array, error) {
	const notPNG = "not a PNG file (no signature and IHDR chunk)"
	head, err := readHead(r, 8+8+13+4, ".png", notPNG)
	if err != nil {
		return nd.Array{}, err
	}
	if !bytes.Equal(head[:8], pngSignature) || string(head[12:16]) != "IHDR" {
		return nd.Array{}, &FormatError{Format: ".png", Msg: notPNG}
	}
	if n := binary.BigEndian.Uint32(head[8:]); n != 13 {
		return nd.Array{}, &FormatError{Format: ".png", Msg: fmt.Sprintf("an IHDR chunk of %d bytes, not 13", n)}
	}
	width, height := binary.BigEndian.Uint32(head[16:]), binary.BigEndian.Uint32(head[20:])
	if width > 1<<31-1 || height > 1<<31-1 {
		return nd.Array{}, &FormatError{Format: ".png", Msg: fmt.Sprintf("image size %dx%d out of range", width, height)}
	}
	if err := checkImageSize(".png", int(width), int(height), 4); err != nil {
		return nd.Array{}, err
	}
	// The zlib stream holds each row's filter byte and packed samples.
	depth, samples := int64(head[24]), int64(pngSamples[head[25]&7])
	decoded := int64(height) * (1 + (int64(width)*samples*min(depth, 16)+7)/8)
	// Deflate stores incompressible data in blocks of 5 bytes' overhead
	// (at worst 9 bits a byte with fixed codes), IDAT chunks split it
	// anywhere and Adam7 adds a filter byte to up to 15/8 rows per row.
	maxIDAT := decoded + decoded/8 + 2*int64(height) + 1<<20
	data, err := readPNGChunks(r, head, maxIDAT, pngMaxOtherChunks, fmt.Sprintf("%dx%d", width, height))
	if err != nil {
		return nd.Array{}, err
	}
	if err := checkClaimedPixels(".png", int(width), int(height), 4, decoded, len(data), pngMaxRatio); err != nil {
		return nd.Array{}, err
	}
	if a, ok := decodePNGFast(data); ok {
		return a, nil
	}
	return decodePNG(data)
}

// decodePNG decodes a whole PNG file through image/png: every kind of
// file, and every error in its words.
func decodePNG(data []byte) (nd.Array, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nd.Array{}, pngError(err)
	}
	if p, ok := img.(*image.Paletted); ok {
		return paletteSamples(p), nil
	}
	a, err := FromImage(img)
	if err != nil {
		return nd.Array{}, err
	}
	if len(a.Shape) == 2 {
		return a, nil
	}
	// a is H×W×4; keep the samples the file holds.
	switch colorType := data[25]; {
	case colorType == pngGrayAlpha || colorType == pngGray:
		return selectChannels(a, 0, 3), nil
	case colorType == pngRGB && isOpaque(a):
		return selectChannels(a, 0, 1, 2), nil
	}
	return a, nil
}

// pngMaxOtherChunks bounds the bytes of a PNG's chunks other than IDAT
// together (text, colour profiles, EXIF): generous beside real files.
const pngMaxOtherChunks = 64 << 20

// readPNGChunks reads a PNG's chunks after the signature and IHDR (head)
// up to and including IEND, never beyond it: the image data (IDAT) up to
// maxIDAT bytes, the other chunks up to maxOther together. Each chunk's
// length and type are checked before its data is read, which is read in
// pieces that grow with what arrives.
func readPNGChunks(r io.Reader, head []byte, maxIDAT, maxOther int64, size string) ([]byte, error) {
	data := bytes.NewBuffer(head)
	var idat, other int64
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return nil, pngReadError(err)
		}
		n, typ := int64(binary.BigEndian.Uint32(ch[:4])), string(ch[4:])
		switch {
		case n > 1<<31-1:
			return nil, &FormatError{Format: ".png", Msg: fmt.Sprintf("chunk %q claims %d bytes, beyond PNG's 2³¹ − 1", typ, n)}
		case !pngChunkType(ch[4:]):
			return nil, &FormatError{Format: ".png", Msg: fmt.Sprintf("chunk type %q is not four ASCII letters", typ)}
		case typ == "IDAT":
			if idat += n; idat > maxIDAT {
				return nil, &FormatError{Format: ".png", Msg: fmt.Sprintf("more image data (IDAT) than the %d bytes a %s image of its type can take", maxIDAT, size)}
			}
		default:
			if other += n; other > maxOther {
				return nil, &FormatError{Format: ".png", Msg: fmt.Sprintf("chunks besides the image data take more than %d bytes", maxOther)}
			}
		}
		data.Write(ch[:])
		// The chunk's data and CRC.
		if got, err := data.ReadFrom(io.LimitReader(r, n+4)); err != nil {
			return nil, pngReadError(err)
		} else if got < n+4 {
			return nil, pngReadError(io.ErrUnexpectedEOF)
		}
		if typ == "IEND" {
			return data.Bytes(), nil
		}
	}
}

// pngChunkType reports whether a chunk type is four ASCII letters.
func pngChunkType(t []byte) bool {
	for _, c := range t {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// pngReadError is an error reading a PNG's chunks: an early end is a
// truncated file, anything else an I/O error.
func pngReadError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &FormatError{Format: ".png", Msg: "truncated file", Err: io.ErrUnexpectedEOF}
	}
	return fmt.Errorf("imageio: reading .png: %w", err)
}

// paletteSamples looks up every pixel's colour: RGB, or RGBA when the
// palette has transparency. The entries are taken unpremultiplied, so that
// a transparent entry keeps its colour.
func paletteSamples(p *image.Paletted) nd.Array {
	c := 3
	if !paletteOpaque(p) {
		c = 4
	}
	lut := make([][4]uint8, 256)
	for i, col := range p.Palette {
		n := color.NRGBAModel.Convert(col).(color.NRGBA)
		if direct, ok := col.(color.NRGBA); ok {
			n = direct
		}
		lut[i] = [4]uint8{n.R, n.G, n.B, n.A}
	}
	b := p.Bounds()
	out := make([]uint8, 0, b.Dx()*b.Dy()*c)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for _, i := range p.Pix[(y-b.Min.Y)*p.Stride : (y-b.Min.Y)*p.Stride+b.Dx()] {
			out = append(out, lut[i][:c]...)
		}
	}
	return nd.Array{Shape: []int{b.Dy(), b.Dx(), c}, Data: out}
}

// pngError turns image/png's errors into ours: its FormatError and
// UnsupportedError are strings, and a short file shows as io.ErrUnexpectedEOF.
func pngError(err error) error {
	var fe png.FormatError
	var ue png.UnsupportedError
	switch {
	case errors.As(err, &fe):
		return &FormatError{Format: ".png", Msg: string(fe), Err: err}
	case errors.As(err, &ue):
		return &UnsupportedError{Format: ".png", What: "feature", Value: string(ue)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &FormatError{Format: ".png", Msg: "truncated file", Err: err}
	}
	return &FormatError{Format: ".png", Msg: err.Error(), Err: err}
}

func paletteOpaque(p *image.Paletted) bool {
	for _, c := range p.Palette {
		if _, _, _, a := c.RGBA(); a != 0xffff {
			return false
		}
	}
	return true
}

// isOpaque reports whether every alpha sample of an H×W×4 array is full.
func isOpaque(a nd.Array) bool {
	switch d := a.Data.(type) {
	case []uint8:
		return alphaFull(d, 0xff)
	case []uint16:
		return alphaFull(d, 0xffff)
	}
	return false
}

func alphaFull[T uint8 | uint16](d []T, full T) bool {
	for i := 3; i < len(d); i += 4 {
		if d[i] != full {
			return false
		}
	}
	return true
}

// selectChannels returns the H×W×len(idx) array of the channels idx of an
// H×W×C array, or H×W when one channel is kept.
func selectChannels(a nd.Array, idx ...int) nd.Array {
	h, w, c := a.Shape[0], a.Shape[1], a.Shape[2]
	shape := []int{h, w, len(idx)}
	if len(idx) == 1 {
		shape = shape[:2]
	}
	if d, ok := a.Data.([]uint16); ok {
		return nd.Array{Shape: shape, Data: gather(d, c, idx)}
	}
	// FromImage gives only uint8 or uint16 samples.
	return nd.Array{Shape: shape, Data: gather(a.Data.([]uint8), c, idx)}
}

func gather[T any](d []T, c int, idx []int) []T {
	out := make([]T, 0, len(d)/c*len(idx))
	for p := 0; p < len(d); p += c {
		for _, i := range idx {
			out = append(out, d[p+i])
		}
	}
	return out
}

// imageShape returns an image array's height, width and samples per pixel:
// H×W is one sample, H×W×C is C from 1 to 4.
func imageShape(a nd.Array, format string) (h, w, c int, err error) {
	if err := a.Check(); err != nil {
		return 0, 0, 0, err
	}
	if a.DType().IsComplex() {
		return 0, 0, 0, complexError(format, "", a.DType())
	}
	switch {
	case len(a.Shape) == 2:
		return a.Shape[0], a.Shape[1], 1, nil
	case len(a.Shape) == 3 && a.Shape[2] >= 1 && a.Shape[2] <= 4:
		return a.Shape[0], a.Shape[1], a.Shape[2], nil
	}
	return 0, 0, 0, &UnsupportedError{Format: format, What: "image shape", Value: fmt.Sprint(a.Shape),
		Detail: "an image is H×W or H×W×C with C from 1 to 4; write other arrays (a filter bank's output, a volume) to .npy or .tif"}
}

// pngSixteenBit reports whether an array is written as a 16-bit PNG: uint16,
// int16 and int32 arrays are; uint8 and float arrays are written with 8 bits.
func pngSixteenBit(dt nd.DType) bool {
	return dt == nd.Uint16 || dt == nd.Int16 || dt == nd.Int32
}

// WritePNG encodes an H×W or H×W×C array (C = 1 gray, 2 gray and alpha,
// 3 RGB, 4 RGBA) as a PNG of the same colour type, at zlib level
// DefaultPNGCompression (see WritePNGLevel). uint16, int16 and int32
// arrays give 16-bit samples, other dtypes 8-bit; values are converted by
// nd.Store's rule (round half to even, saturate, NaN → 0), not rescaled.
func WritePNG(w io.Writer, a nd.Array) error {
	return WritePNGLevel(w, a, DefaultPNGCompression)
}

// imageSamples converts a to the sample type of an 8- or 16-bit image.
func imageSamples(a nd.Array, sixteen bool) nd.Array {
	if sixteen {
		return nd.Array{Shape: a.Shape, Data: samples16(a)}
	}
	return nd.Array{Shape: a.Shape, Data: samples8(a)}
}
