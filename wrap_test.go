package ndconv_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/nd"
)

// Device.Wrap is CUDA's alone (device memory the caller owns, a CuPy or
// PyTorch array's): on the CPU it is refused before anything is touched,
// and its arguments are checked first. The CUDA side runs on the device
// machine (python/tests/gpu_arrays_device.py: CuPy and PyTorch arrays,
// host memory and a range past its allocation refused).
func TestDeviceWrapRefused(t *testing.T) {
	dev, err := ndconv.OpenDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var ue *nd.UnsupportedError
	if _, err := dev.Wrap(ndconv.Float32, 0x1000, 64, 4, 4); !errors.As(err, &ue) || !strings.Contains(err.Error(), "device arrays of the caller's memory") {
		t.Errorf("Wrap on the CPU = %v, want an UnsupportedError about the caller's memory", err)
	}
	var ae *nd.ArgumentError
	for _, c := range []struct {
		nbytes int
		shape  []int
		want   string
	}{
		{63, []int{4, 4}, "float32 [4 4] needs 64 bytes, the memory has 63"},
		{-1, []int{4, 4}, "-1 bytes is negative"},
		{64, []int{-4, 4}, "negative"},
	} {
		_, err := dev.Wrap(ndconv.Float32, 0x1000, c.nbytes, c.shape...)
		if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Wrap(%d bytes, %v) = %v, want an error with %q", c.nbytes, c.shape, err, c.want)
		}
	}
	var zero *ndconv.Device
	if _, err := zero.Wrap(ndconv.Float32, 0x1000, 64, 4, 4); err == nil {
		t.Error("Wrap on a nil Device: no error")
	}
	// WithStream changes nothing on the CPU.
	p, err := dev.NewPlan(ndconv.Correlation, []int{4, 4}, ndconv.Float32, ndconv.Options{}, ndconv.NewKernel([]int{3}, []float64{1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	in, err := dev.Alloc(ndconv.Float32, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ExecuteDevice(ndconv.WithStream(context.Background(), 7), nil, in); err != nil {
		t.Errorf("ExecuteDevice with a stream on the CPU: %v", err)
	}
}
