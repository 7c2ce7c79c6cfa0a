package tiff_test

import (
	"bytes"
	"fmt"

	"github.com/ndconv/ndconv/imageio/tiff"
	"github.com/ndconv/ndconv/nd"
)

// A float32 volume of two pages, written with LZW and the floating-point
// predictor and read back.
func Example() {
	data := make([]float32, 2*3*4)
	for i := range data {
		data[i] = float32(i) / 8
	}
	volume, err := nd.FromSlice(data, 2, 3, 4)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	if err := tiff.Write(&file, tiff.Image{Array: volume}, tiff.Options{Compression: tiff.LZW, Predictor: true}); err != nil {
		panic(err)
	}
	img, err := tiff.Read(bytes.NewReader(file.Bytes()), int64(file.Len()))
	if err != nil {
		panic(err)
	}
	back, _ := nd.Slice[float32](img.Array)
	fmt.Println(img.Array.Shape, img.Array.DType(), img.Channels, back[23])
	// Output: [2 3 4] float32 0 2.875
}
