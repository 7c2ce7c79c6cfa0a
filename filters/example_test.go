package filters_test

import (
	"fmt"

	"github.com/ndconv/ndconv/filters"
)

// A 2-D Sobel along axis 0 is one separable term: [-1, 0, 1] down the rows,
// [1, 2, 1] along the columns, exactly scipy.ndimage.sobel(x, axis=0).
func Example_sobel() {
	named, err := filters.Parse("sobel:axis=0")
	if err != nil {
		panic(err)
	}
	built, err := named.Build(2)
	if err != nil {
		panic(err)
	}
	f := built[0]
	fmt.Println(f.Name, f.Combine, f.Terms[0].Shape, f.Terms[0].Factors)
	// Output: sobel:axis=0 single [3 3] [[-1 0 1] [1 2 1]]
}

// A Gaussian is separable: one factor per axis, [1] where sigma is 0 (scipy
// does not smooth that axis).
func Example_gaussian() {
	built, err := filters.Gaussian{Sigma: []float64{0.5, 0}}.Build(2)
	if err != nil {
		panic(err)
	}
	for _, factor := range built[0].Terms[0].Factors {
		fmt.Printf("%.4f\n", factor)
	}
	// Output:
	// [0.0003 0.1065 0.7866 0.1065 0.0003]
	// [1.0000]
}

// The Laplacian of Gaussian is the Sum of one term per axis (order 2 on that
// axis); the gradient magnitude is the Magnitude of order-1 terms.
func Example_gaussianLaplace() {
	for _, spec := range []string{"log:sigma=1.5", "ggm:sigma=1"} {
		named, err := filters.Parse(spec)
		if err != nil {
			panic(err)
		}
		built, err := named.Build(3)
		if err != nil {
			panic(err)
		}
		f := built[0]
		fmt.Println(f.Name, f.Combine, len(f.Terms), "terms of shape", f.Terms[0].Shape)
	}
	// Output:
	// log:sigma=1.5 sum 3 terms of shape [13 13 13]
	// gradient-magnitude:sigma=1 magnitude 3 terms of shape [9 9 9]
}

// laplace is one dense kernel: a cross.
func Example_laplace() {
	built, err := filters.Laplace{}.Build(2)
	if err != nil {
		panic(err)
	}
	fmt.Println(built[0].Terms[0].Shape, built[0].Terms[0].Weights)
	// Output: [3 3] [0 1 0 1 -4 1 0 1 0]
}

// A Gabor bank is one Filter per orientation, every kernel padded to the
// bank's shape; each Name builds that member alone.
func Example_gaborBank() {
	named, err := filters.Parse("gabor-bank:orientations=4,frequency=0.25,sigma_x=2,sigma_y=4")
	if err != nil {
		panic(err)
	}
	built, err := named.Build(2)
	if err != nil {
		panic(err)
	}
	for _, f := range built {
		fmt.Println(f.Terms[0].Shape, f.Name)
	}
	// Output:
	// [25 25] gabor:frequency=0.25,sigma_x=2,sigma_y=4
	// [25 25] gabor:frequency=0.25,theta=0.7853981633974483,sigma_x=2,sigma_y=4
	// [25 25] gabor:frequency=0.25,theta=1.5707963267948966,sigma_x=2,sigma_y=4
	// [25 25] gabor:frequency=0.25,theta=2.356194490192345,sigma_x=2,sigma_y=4
}

// Errors name the filter, the parameter and what is accepted.
func ExampleParse_errors() {
	for _, spec := range []string{"blur", "gaussian:sigm=2", "uniform:size=0", "sobel:axis=1x2"} {
		_, err := filters.Parse(spec)
		fmt.Println(err)
	}
	// Output:
	// filters: unknown filter "blur" (known: gaussian, uniform, sobel, prewitt, scharr, laplace, log, gradient-magnitude, gabor, gabor-bank)
	// filters: gaussian: sigm: unknown parameter (gaussian takes sigma, order, truncate)
	// filters: uniform: size=0: each size must be at least 1
	// filters: sobel: axis=1x2: takes one value, not a per-axis list
}

// Combine.Apply makes a filter's output from its terms' outputs.
func ExampleCombine_Apply() {
	dx := []float64{3, 0}
	dy := []float64{4, -2}
	fmt.Println(filters.Magnitude.Apply(nil, dx, dy), filters.Sum.Apply(nil, dx, dy))
	// Output: [5 2] [7 -2]
}
