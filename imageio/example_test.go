package imageio_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

func ExampleWriteNPY() {
	a, err := nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := imageio.WriteNPY(&buf, a); err != nil {
		panic(err)
	}
	// A 128-byte header, as numpy writes it, then 6 float32 values.
	fmt.Println(buf.Len(), "bytes")
	fmt.Printf("%q\n", bytes.TrimRight(buf.Bytes()[10:128], " \n"))
	// Output:
	// 152 bytes
	// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
}

func ExampleReadNPY() {
	// A big-endian int16 file in Fortran order, as numpy.save writes
	// np.asfortranarray(np.array([[1, 2, 3], [4, 5, 6]], dtype='>i2')).
	header := "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }\n"
	file := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), 0)
	file = append(file, header...)
	file = append(file, 0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6)

	a, err := imageio.ReadNPY(bytes.NewReader(file))
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Shape, a.DType(), a.Data)

	// Types ndconv does not hold are refused with a typed error.
	_, err = imageio.ReadNPYFile("testdata/npy/c32.npy")
	fmt.Println(err)
	// Output:
	// [2 3] int16 [1 2 3 4 5 6]
	// imageio: unsupported .npy dtype "<c32" (complex256)
}

func ExampleToImage() {
	// A filter's float output, rounded half to even and saturated into
	// the 8-bit image type of the input.
	in := image.NewGray(image.Rect(0, 0, 4, 1))
	a, err := nd.FromSlice([]float32{2.5, 3.5, -1, 300}, 1, 4)
	if err != nil {
		panic(err)
	}
	img, err := imageio.ToImage(a, in)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %v\n", img, img.(*image.Gray).Pix)

	// A paletted image has no array type of its own: it becomes
	// non-premultiplied RGBA.
	p := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.Gray{7}, color.NRGBA{255, 0, 0, 128}})
	p.Pix[1] = 1
	b, err := imageio.FromImage(p)
	fmt.Println(b.Shape, b.DType(), b.Data, err)
	// Output:
	// *image.Gray [2 4 0 255]
	// [1 2 4] uint8 [7 7 7 255 255 0 0 128] <nil>
}
