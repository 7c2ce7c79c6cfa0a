package fft_test

import (
	"fmt"

	"github.com/ndconv/ndconv/internal/fft"
)

// A real sequence's coefficients, and back: the inverse is unnormalised,
// n times the sequence.
func ExampleRealFFT() {
	plan := fft.NewRealFFT(8)
	coeff := plan.Forward(nil, []float32{1, 1, 1, 1, 0, 0, 0, 0})
	fmt.Printf("%.3f\n", coeff)
	back := plan.Inverse(nil, coeff)
	fmt.Printf("%.3f\n", back)
	// Output:
	// [(4.000+0.000i) (1.000-2.414i) (0.000+0.000i) (1.000-0.414i) (0.000+0.000i)]
	// [8.000 8.000 8.000 8.000 0.000 0.000 0.000 0.000]
}
