package ndconv

import (
	"context"
	"image"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// CorrelateImage correlates img with a 2-D kernel, each colour channel
// separately, and returns an image of the same Go type (*image.Gray,
// *image.Gray16, *image.RGBA, *image.NRGBA, *image.RGBA64, …). Values are
// computed in float and rounded half to even and saturated into the
// image's sample type. opt.DType and filter banks do not apply to images:
// use Correlate with imageio.FromImage for those.
func CorrelateImage(ctx context.Context, img image.Image, opt Options, kernel Kernel) (image.Image, error) {
	return runImage(ctx, Correlation, img, opt, kernel)
}

// ConvolveImage is CorrelateImage for convolution.
func ConvolveImage(ctx context.Context, img image.Image, opt Options, kernel Kernel) (image.Image, error) {
	return runImage(ctx, Convolution, img, opt, kernel)
}

func runImage(ctx context.Context, op Operation, img image.Image, opt Options, kernel Kernel) (image.Image, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	src, err := imageArray(img, opt)
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, op, src, opt, []Kernel{kernel})
	if err != nil {
		return nil, err
	}
	return imageio.ToImage(out, img)
}

// imageArray returns img's samples after checking that opt keeps an image
// result an image: its own sample type and size.
func imageArray(img image.Image, opt Options) (Array, error) {
	if img == nil {
		return Array{}, &nd.ArgumentError{Arg: "image", Msg: "a nil image"}
	}
	if opt.DType != 0 {
		return Array{}, &nd.ArgumentError{Arg: "dtype", Msg: "an image keeps its own sample type; filter an Array to choose another"}
	}
	if opt.Mode != Same {
		return Array{}, &nd.ArgumentError{Arg: "mode", Msg: "an image result has the image's size: use Same, or filter an Array"}
	}
	return imageio.FromImage(img)
}
