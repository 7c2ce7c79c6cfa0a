package ndconv_test

import (
	"context"
	"fmt"
	"image"
	"image/color"

	"github.com/ndconv/ndconv"
)

// Blur a grey image with a 3×3 box: the bright pixel spreads evenly (each
// output 255/9 rounds to 28), with scipy's default reflect border.
func ExampleCorrelateImage() {
	img := image.NewGray(image.Rect(0, 0, 5, 5))
	img.SetGray(2, 2, color.Gray{Y: 255})
	box := ndconv.NewKernel([]int{3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	for i := range box.Weights {
		box.Weights[i] = 1.0 / 9
	}
	out, err := ndconv.CorrelateImage(context.Background(), img, ndconv.Options{}, box)
	if err != nil {
		fmt.Println(err)
		return
	}
	blurred := out.(*image.Gray)
	for y := range 5 {
		fmt.Println(blurred.Pix[y*blurred.Stride : y*blurred.Stride+5])
	}
	// Output:
	// [0 0 0 0 0]
	// [0 28 28 28 0]
	// [0 28 28 28 0]
	// [0 28 28 28 0]
	// [0 0 0 0 0]
}

// Filter a volume with a bank of three kernels in one call: the input is
// read once, and the output gains a trailing axis with one value per kernel
// (out[z, y, x, i] is kernel i). Only windows entirely inside the volume are
// computed (valid mode).
func ExampleCorrelate_volumeBank() {
	const n = 6
	data := make([]float32, n*n*n)
	for z := range n {
		for y := range n {
			for x := range n {
				data[(z*n+y)*n+x] = float32(100*z + 10*y + x) // a linear ramp
			}
		}
	}
	volume := ndconv.Array{Shape: []int{n, n, n}, Data: data}
	d := []float64{-0.5, 0, 0.5} // central difference
	one := []float64{0, 1, 0}
	bank := []ndconv.Kernel{
		ndconv.SeparableKernel(d, one, one), // d/dz
		ndconv.SeparableKernel(one, d, one), // d/dy
		ndconv.SeparableKernel(one, one, d), // d/dx
	}
	out, err := ndconv.Correlate(context.Background(), volume, ndconv.Options{Mode: ndconv.Valid}, bank...)
	if err != nil {
		fmt.Println(err)
		return
	}
	grad := out.Data.([]float32)
	fmt.Println("shape", out.Shape)
	fmt.Println("gradient at the first voxel", grad[0:3])
	// Output:
	// shape [4 4 4 3]
	// gradient at the first voxel [100 10 1]
}

// Smooth a 1-D signal with a 5-tap moving average through the typed slice
// entry point; valid mode keeps only full windows.
func ExampleCorrelateSlice() {
	signal := []float64{0, 0, 5, 10, 5, 0, 0, 10, 10}
	avg := ndconv.NewKernel([]int{5}, []float64{0.2, 0.2, 0.2, 0.2, 0.2})
	smooth, shape, err := ndconv.CorrelateSlice(context.Background(), signal, []int{len(signal)}, ndconv.Options{Mode: ndconv.Valid}, avg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(shape, smooth)
	// Output:
	// [5] [4 4 4 5 5]
}

// A Plan prepares once and runs many times on same-shaped data without
// allocating its temporaries again.
func ExampleNewPlan() {
	edge := ndconv.NewKernel([]int{3}, []float64{-1, 0, 1})
	plan, err := ndconv.NewPlan(ndconv.Correlation, []int{4}, ndconv.Int16, ndconv.Options{Border: ndconv.Nearest}, edge)
	if err != nil {
		fmt.Println(err)
		return
	}
	var out ndconv.Array
	for _, frame := range [][]int16{{1, 2, 4, 8}, {8, 4, 2, 1}} {
		out, err = plan.Execute(context.Background(), out, ndconv.Array{Shape: []int{4}, Data: frame})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(out.Data, plan.Method())
	}
	// Output:
	// [1 3 6 4] direct
	// [-4 -6 -3 -1] direct
}

// Keep data on a device between calls: upload once, run plans on device
// arrays with no transfers (here two passes chained, the first's output the
// second's input), download the result. "cpu" runs anywhere; "cuda:0" or
// "opencl:0:0" put the arrays in a GPU's memory with the same code and the
// same bits.
func ExampleOpenDevice() {
	dev, err := ndconv.OpenDevice("cpu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close() // frees the device's arrays and closes its plans
	img := ndconv.Array{Shape: []int{3, 4}, Data: []float32{
		0, 0, 0, 0,
		0, 8, 0, 0,
		0, 0, 0, 0,
	}}
	rows := ndconv.NewKernel([]int{1, 3}, []float64{0.25, 0.5, 0.25})
	cols := ndconv.NewKernel([]int{3, 1}, []float64{0.25, 0.5, 0.25})
	opt := ndconv.Options{Border: ndconv.Constant}
	blurRows, err := dev.NewPlan(ndconv.Correlation, img.Shape, ndconv.Float32, opt, rows)
	if err != nil {
		fmt.Println(err)
		return
	}
	blurCols, err := dev.NewPlan(ndconv.Correlation, img.Shape, ndconv.Float32, opt, cols)
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := dev.Upload(img)
	if err != nil {
		fmt.Println(err)
		return
	}
	tmp, err := blurRows.ExecuteDevice(context.Background(), nil, in) // allocated on the device
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := blurCols.ExecuteDevice(context.Background(), nil, tmp)
	if err != nil {
		fmt.Println(err)
		return
	}
	result, err := out.Download()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dev.Name(), result.Shape, result.Data)
	// Output:
	// cpu [3 4] [0.5 1 0.5 0 1 2 1 0 0.5 1 0.5 0]
}
