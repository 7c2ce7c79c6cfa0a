package ndconv_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestNonFiniteCVal: a NaN or infinite cval, which scipy accepts, reaches
// exactly the outputs whose nonzero taps reach the border, on every method
// and device here — the FFT falls back to the direct method rather than
// spread it to every output — with the CPU direct method's bits.
func TestNonFiniteCVal(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 8))
	devices := testDevices(t)
	for _, cval := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, shape := range [][]int{{40}, {23, 31}, {9, 10, 11}} {
			ks := make([]int, len(shape))
			for i := range ks {
				ks[i] = 5
			}
			c := enginetest.Case{
				Spec:  nd.Spec{Shape: shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, ks...)}, Border: nd.Constant, CVal: cval},
				Input: enginetest.RandomArray(rng, nd.Float32, shape...),
			}
			want := c.Want()
			var direct ndconv.Array
			for _, dev := range devices {
				if dev != "cpu" && len(shape) != 2 {
					continue // a GPU's kernels for one shape: PoCL builds each for seconds
				}
				for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
					if m == ndconv.Separable && len(shape) > 1 {
						continue // a random dense kernel is not separable
					}
					opt := ndconv.Options{Device: dev, Method: m, Border: ndconv.Constant, CVal: cval}
					got, err := ndconv.Correlate(ctx, c.Input, opt, c.Spec.Kernels...)
					if err != nil {
						t.Fatalf("%s cval %v %v %v: %v", dev, cval, shape, m, err)
					}
					if msg := c.Check(got, want); msg != "" {
						t.Fatalf("%s cval %v %v %v: %s", dev, cval, shape, m, msg)
					}
					if direct.Data == nil {
						direct = got // the CPU's direct method, first
					} else if !sameFloat32s(got.Data.([]float32), direct.Data.([]float32)) {
						t.Fatalf("%s cval %v %v: %v's bits differ from the CPU direct method's", dev, cval, shape, m)
					}
				}
			}
		}
	}
}

// sameFloat32s compares bit patterns, any NaN equal to any NaN.
func sameFloat32s(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
