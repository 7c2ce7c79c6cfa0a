package ndconv_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

// TestHalfOnEveryDevice runs float16 data and outputs on each GPU backend
// present (as their float32 twins, converted on the host) and compares
// them with the CPU engine's bits, for the direct and separable methods,
// NaN and Inf included.
func TestHalfOnEveryDevice(t *testing.T) {
	devices := gpuDevices(t)
	rng := rand.New(rand.NewPCG(7, 7))
	dense := ndconv.NewKernel([]int{3, 5}, randomFloats(rng, 15))
	rank1 := ndconv.NewKernel([]int{3, 5}, ndconv.SeparableKernel(randomFloats(rng, 3), randomFloats(rng, 5)).Dense())
	runs := 0
	for _, c := range []struct {
		in, out nd.DType
		method  ndconv.Method
		k       ndconv.Kernel
	}{
		{nd.Float16, nd.Float16, ndconv.Direct, dense},
		{nd.Float16, nd.Float32, ndconv.Direct, dense},
		{nd.Uint8, nd.Float16, ndconv.Direct, dense},
		{nd.Float16, nd.Float16, ndconv.Separable, rank1},
		{nd.Float16, nd.Uint8, ndconv.Direct, dense},
	} {
		x := enginetest.RandomArray(rng, c.in, 21, 17)
		if h, ok := x.Data.([]nd.Half); ok {
			h[5], h[40] = nd.HalfOf(math.NaN()), nd.HalfOf(1e9) // NaN and +Inf (out of float16's range)
		}
		opt := ndconv.Options{Border: ndconv.Reflect, Device: "cpu", Method: c.method, DType: c.out}
		want := mustArray(t)(ndconv.Correlate(ctx, x, opt, c.k))
		for _, dev := range devices {
			opt.Device = dev
			got := mustArray(t)(ndconv.Correlate(ctx, x, opt, c.k))
			runs++
			// NaN payloads aside, as every device comparison: a GPU's NaN
			// is canonical, x86's carries the input's (the data has one).
			if msg := gputest.SameBits(got, want); msg != "" {
				t.Errorf("%v → %v %v on %s: %s", c.in, c.out, c.method, dev, msg)
			}
		}
	}
	t.Logf("%d runs on %v", runs, devices)
}

// gpuDevices are the GPU backends present; the test skips without one.
func gpuDevices(t *testing.T) []string {
	var devices []string
	if opencl.Available() == nil {
		devices = append(devices, "opencl")
	}
	if cuda.Available() == nil {
		devices = append(devices, "cuda")
	}
	if len(devices) == 0 {
		t.Skip("no GPU backend here")
	}
	return devices
}
