package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"runtime"

	ourjpeg "github.com/ndconv/ndconv/imageio/jpeg"
	"github.com/ndconv/ndconv/nd"
)

// ReadJPEG decodes a JPEG into a uint8 H×W array (grayscale) or H×W×3 (RGB).
// Baseline and extended sequential Huffman-coded 8-bit files of one or
// three components are decoded by imageio/jpeg, to the samples
// libjpeg-turbo (and so OpenCV) gives; the others (progressive,
// arithmetic-coded, 12-bit, CMYK, unusual sampling), and any file it
// cannot read, by image/jpeg, converted by its colour models.
//
// The SOI marker and the header up to the frame (SOF) are read first,
// within jpegMaxHeader bytes, and the rest within what the frame's size
// can take (jpegMaxBytes): a stream that is not a JPEG, or does not end, is
// refused with bounded memory.
func ReadJPEG(r io.Reader) (nd.Array, error) {
	soi, err := readHead(r, 3, ".jpg", "not a JPEG file (no SOI marker)")
	if err != nil {
		return nd.Array{}, err
	}
	if soi[0] != 0xff || soi[1] != 0xd8 || soi[2] != 0xff {
		return nd.Array{}, &FormatError{Format: ".jpg", Msg: "not a JPEG file (no SOI marker)"}
	}
	// DecodeConfig reads up to the frame header (and a buffer beyond):
	// what it reads is kept, to be decoded again with the rest.
	head := bytes.NewBuffer(soi)
	headed := io.LimitReader(r, jpegMaxHeader)
	cfg, err := jpeg.DecodeConfig(io.MultiReader(bytes.NewReader(soi), io.TeeReader(headed, head)))
	if err != nil {
		if head.Len() >= jpegMaxHeader {
			return nd.Array{}, &FormatError{Format: ".jpg", Msg: fmt.Sprintf("no frame header (SOF) in the first %d bytes", jpegMaxHeader)}
		}
		return nd.Array{}, jpegError(err)
	}
	if err := checkImageSize(".jpg", cfg.Width, cfg.Height, 3); err != nil {
		return nd.Array{}, err
	}
	limit := int64(head.Len()) + jpegMaxBytes*int64(cfg.Width)*int64(cfg.Height)*4 + 1<<20
	data, err := readRest(r, head.Bytes(), limit, ".jpg", fmt.Sprintf("a %dx%d JPEG can take", cfg.Width, cfg.Height))
	if err != nil {
		return nd.Array{}, err
	}
	if err := checkClaimedPixels(".jpg", cfg.Width, cfg.Height, 3, 3*int64(cfg.Width)*int64(cfg.Height), len(data), jpegMaxRatio); err != nil {
		return nd.Array{}, err
	}
	ours, oursErr := ourjpeg.Decode(data)
	if oursErr == nil {
		shape := []int{ours.Height, ours.Width, 3}
		if ours.Channels == 1 {
			shape = shape[:2]
		}
		return nd.Array{Shape: shape, Data: ours.Pix}, nil
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		// A file of the subset imageio/jpeg decodes: its error, typed
		// as image/jpeg's are (a cut file is "truncated file").
		var fe *ourjpeg.FormatError
		if errors.As(oursErr, &fe) {
			return nd.Array{}, jpegError(oursErr)
		}
		return nd.Array{}, jpegError(err)
	}
	if y, ok := img.(*image.YCbCr); ok {
		return ycbcrToRGB(y), nil
	}
	a, err := FromImage(img)
	if err != nil || len(a.Shape) == 2 {
		return a, err
	}
	return selectChannels(a, 0, 1, 2), nil
}

// jpegMaxHeader bounds a JPEG's markers before its frame header (SOF):
// application segments of 64 KiB each, an ICC profile split over up to
// 255 of them.
const jpegMaxHeader = 17 << 20

// jpegMaxBytes bounds the bytes of entropy-coded data a JPEG holds per
// sample of up to 4 components: a coefficient takes at most 27 bits, 64
// of them a block of 64 samples, and byte stuffing doubles that at worst.
const jpegMaxBytes = 8

// Compressed images can claim any size in a few bytes; image/png and
// image/jpeg allocate the whole image before reading its data. These are
// generous bounds on how many decoded bytes one byte of file can hold
// (zlib's limit is 1032; a JPEG needs a few bits per 8×8 block and
// component), past which a header is refused before anything is allocated.
const (
	pngMaxRatio  = 1100
	jpegMaxRatio = 2000
)

// checkClaimedPixels refuses a header whose width × height × samples is
// beyond ndconv's array limit, or whose decoded size (decodedBytes) is
// beyond what fileBytes could hold.
func checkClaimedPixels(format string, width, height, samples int, decodedBytes int64, fileBytes, maxRatio int) error {
	if err := checkImageSize(format, width, height, samples); err != nil {
		return err
	}
	if decodedBytes > int64(maxRatio)*int64(fileBytes)+1<<16 {
		return &FormatError{Format: format, Msg: fmt.Sprintf("the header claims %dx%d pixels, more than a %d-byte file can hold", width, height, fileBytes)}
	}
	return nil
}

// checkImageSize refuses a header whose width × height × samples is beyond
// ndconv's array limit.
func checkImageSize(format string, width, height, samples int) error {
	if _, err := nd.NumElements([]int{height, width, samples}); err != nil {
		return &UnsupportedError{Format: format, What: "image size", Value: fmt.Sprintf("%dx%d", width, height), Detail: err.Error()}
	}
	return nil
}

func jpegError(err error) error {
	var fe jpeg.FormatError
	var ue jpeg.UnsupportedError
	var ofe *ourjpeg.FormatError
	var oue *ourjpeg.UnsupportedError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &FormatError{Format: ".jpg", Msg: "truncated file", Err: err}
	case errors.As(err, &ofe):
		return &FormatError{Format: ".jpg", Msg: ofe.Msg, Err: err}
	case errors.As(err, &oue):
		return &UnsupportedError{Format: ".jpg", What: "feature", Value: oue.What}
	case errors.As(err, &fe):
		return &FormatError{Format: ".jpg", Msg: string(fe), Err: err}
	case errors.As(err, &ue):
		return &UnsupportedError{Format: ".jpg", What: "feature", Value: string(ue)}
	}
	return &FormatError{Format: ".jpg", Msg: err.Error(), Err: err}
}

// DefaultJPEGQuality is the quality WriteJPEG uses when given 0.
const DefaultJPEGQuality = 95

// WriteJPEG encodes an H×W (gray) or H×W×3 (RGB) array as a baseline JPEG
// of the given quality (1–100; 0 means DefaultJPEGQuality) with
// imageio/jpeg: the bytes cv2.imencode writes for the same samples and
// quality (JFIF, YCbCr 4:2:0 by libjpeg's conversion, standard tables).
// Samples are converted to 8 bits by nd.Store's rule. JPEG has no alpha:
// two- and four-channel arrays are refused.
func WriteJPEG(w io.Writer, a nd.Array, quality int) error {
	h, wd, c, err := imageShape(a, ".jpg")
	if err != nil {
		return err
	}
	if c == 2 || c == 4 {
		return &UnsupportedError{Format: ".jpg", What: "image shape", Value: fmt.Sprint(a.Shape), Detail: "JPEG has no alpha channel; write .png or .tif"}
	}
	if h == 0 || wd == 0 || h > 65535 || wd > 65535 {
		return &UnsupportedError{Format: ".jpg", What: "image size", Value: fmt.Sprintf("%dx%d", wd, h), Detail: "a JPEG is 1 to 65535 pixels on each side"}
	}
	if quality == 0 {
		quality = DefaultJPEGQuality
	}
	if quality < 1 || quality > 100 {
		return &UnsupportedError{Format: ".jpg", What: "quality", Value: fmt.Sprint(quality), Detail: "JPEG quality is 1 to 100"}
	}
	pix, ok := a.Data.([]uint8)
	if !ok {
		pix = imageSamples(a, false).Data.([]uint8)
	}
	return ourjpeg.Encode(w, &ourjpeg.Image{Width: wd, Height: h, Channels: max(c, 1), Pix: pix}, &ourjpeg.Options{Quality: quality})
}

// ycbcrToRGB converts a decoded colour JPEG to an H×W×3 array with
// color.YCbCrToRGB, the conversion image/draw applies (and so FromImage
// did before), giving the same samples without the RGBA image and the two
// copies between; rows are converted on all cores.
func ycbcrToRGB(m *image.YCbCr) nd.Array {
	r := m.Rect
	h, w := r.Dy(), r.Dx()
	out := make([]uint8, h*w*3)
	shift := 0 // log2 of the chroma planes' horizontal subsampling
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420:
		shift = 1
	case image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410:
		shift = 2
	}
	rowsPer := max(1, (1<<16)/max(w, 1))
	_ = nd.ForEach(runtime.GOMAXPROCS(0), (h+rowsPer-1)/rowsPer, nil, func(_, k int) {
		for y := k * rowsPer; y < min(h, (k+1)*rowsPer); y++ {
			row := out[y*w*3 : (y+1)*w*3]
			yi := m.YOffset(r.Min.X, r.Min.Y+y)
			// COffset, with its horizontal step taken out of the loop.
			ci0 := m.COffset(r.Min.X, r.Min.Y+y) - r.Min.X>>shift
			for x := range w {
				ci := ci0 + (r.Min.X+x)>>shift
				row[3*x], row[3*x+1], row[3*x+2] = color.YCbCrToRGB(m.Y[yi+x], m.Cb[ci], m.Cr[ci])
			}
		}
	}) // nothing here panics on a decoder's own image
	return nd.Array{Shape: []int{h, w, 3}, Data: out}
}
