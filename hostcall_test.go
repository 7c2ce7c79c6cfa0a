package ndconv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
)

// hostCallCase is one shape of the many-files work (issue 27): a host
// array in, a host array out, through one reused plan.
type hostCallCase struct {
	name   string
	shape  []int
	dtype  ndconv.DType
	kernel []int
	axes   []int
}

var hostCallCases = []hostCallCase{
	{"png512-u8-7x7", []int{512, 512}, ndconv.Uint8, []int{7, 7}, nil},
	{"bank64-u8-7x7", []int{64, 512, 512}, ndconv.Uint8, []int{7, 7}, []int{1, 2}},
	{"vol128-f32-5x5x5", []int{128, 128, 128}, ndconv.Float32, []int{5, 5, 5}, nil},
}

// hostCallPlan makes c's plan on device with random data in src.
func hostCallPlan(tb testing.TB, c hostCallCase, device string) (*ndconv.Plan, ndconv.Array, ndconv.Array) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(27, 27))
	n := 1
	for _, s := range c.kernel {
		n *= s
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = rng.Float64()
	}
	p, err := ndconv.NewPlan(ndconv.Correlation, c.shape, c.dtype, ndconv.Options{Device: device, Axes: c.axes}, ndconv.NewKernel(c.kernel, w))
	if err != nil {
		tb.Fatal(err)
	}
	src, dst := newArrays(tb, p, c)
	if b, ok := src.Data.([]uint8); ok {
		for i := range b {
			b[i] = uint8(rng.Uint32())
		}
	} else {
		for i, f := 0, src.Data.([]float32); i < len(f); i++ {
			f[i] = rng.Float32()
		}
	}
	return p, src, dst
}

// newArrays allocates an input and an output for p.
func newArrays(tb testing.TB, p *ndconv.Plan, c hostCallCase) (src, dst ndconv.Array) {
	src, err := nd.New(c.dtype, c.shape...)
	if err == nil {
		dst, err = nd.New(p.DType(), p.Shape()...)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return src, dst
}

// BenchmarkHostCall is a reused plan's cost per call on host arrays, the
// many-files case: one call at a time, and every core's goroutine calling
// the one plan at once (RunParallel), as the folder pipeline's workers do.
// SetBytes counts input and output.
func BenchmarkHostCall(b *testing.B) {
	devices := []string{"cpu"}
	if cuda.Available() == nil {
		devices = append(devices, "cuda:0")
	}
	for _, device := range devices {
		for _, c := range hostCallCases {
			p, src, dst := hostCallPlan(b, c, device)
			ctx := context.Background()
			bytes := int64(len(src.Bytes()) + len(dst.Bytes()))
			b.Run(fmt.Sprintf("%s/%s/serial", device, c.name), func(b *testing.B) {
				b.SetBytes(bytes)
				for b.Loop() {
					if _, err := p.Execute(ctx, dst, src); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%s/parallel", device, c.name), func(b *testing.B) {
				b.SetBytes(bytes)
				b.RunParallel(func(pb *testing.PB) {
					s, d := newArrays(b, p, c)
					for pb.Next() {
						if _, err := p.Execute(ctx, d, s); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			p.Close()
		}
	}
}
