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
// exactly the outputs whose nonzero taps reach the border, on every
// method — the FFT falls back to the direct method rather than spread it
// to every output — with the exact methods' bits equal to each other.
func TestNonFiniteCVal(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 8))
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
			opt := ndconv.Options{Device: "cpu", Border: ndconv.Constant, CVal: cval}
			var direct ndconv.Array
			for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
				if m == ndconv.Separable && len(shape) > 1 {
					continue // a random dense kernel is not separable
				}
				opt.Method = m
				got, err := ndconv.Correlate(ctx, c.Input, opt, c.Spec.Kernels...)
				if err != nil {
					t.Fatalf("cval %v %v %v: %v", cval, shape, m, err)
				}
				if msg := c.Check(got, want); msg != "" {
					t.Fatalf("cval %v %v %v: %s", cval, shape, m, msg)
				}
				if m == ndconv.Direct {
					direct = got
				} else if !sameFloat32s(got.Data.([]float32), direct.Data.([]float32)) {
					t.Fatalf("cval %v %v: %v's bits differ from the direct method's", cval, shape, m)
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
