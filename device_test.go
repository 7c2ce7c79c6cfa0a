package ndconv_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
	"github.com/ndconv/ndconv/plan"
)

// testDevices are the devices OpenDevice can open here: the CPU always,
// an OpenCL device (PoCL in CI) and a CUDA GPU where there is one.
func testDevices(t *testing.T) []string {
	devices := []string{"cpu"}
	if opencl.Available() == nil {
		devices = append(devices, "opencl")
	} else if os.Getenv("NDCONV_REQUIRE_OPENCL") == "1" {
		t.Errorf("NDCONV_REQUIRE_OPENCL=1 and no OpenCL: %v", opencl.Available())
	}
	if cuda.Available() == nil {
		devices = append(devices, "cuda:0")
	}
	return devices
}

// TestDeviceExecute runs plans on device arrays — a direct and a separable
// problem, a filter bank, integer data — and checks that each gives the
// host API's bits (the CPU's, which the GPU engines match), that the
// output allocated on the device when none is given downloads to the same,
// and that two plans chain on the device with no host copy in between.
func TestDeviceExecute(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	cases := []struct {
		name    string
		in      nd.Array
		opt     ndconv.Options
		kernels []ndconv.Kernel
	}{
		{"direct/reflect", enginetest.RandomArray(rng, nd.Float32, 19, 23), ndconv.Options{},
			[]ndconv.Kernel{enginetest.RandomKernel(rng, true, 5, 3)}},
		{"separable/wrap/full", enginetest.RandomArray(rng, nd.Float32, 17, 12), ndconv.Options{Border: ndconv.Wrap, Mode: ndconv.Full},
			[]ndconv.Kernel{enginetest.RandomFactors(rng, 3, 7)}},
		{"bank/uint16→float32/constant", enginetest.RandomArray(rng, nd.Uint16, 11, 13), ndconv.Options{Border: ndconv.Constant, CVal: 2.5, DType: ndconv.Float32},
			[]ndconv.Kernel{enginetest.RandomKernel(rng, false, 3, 3), enginetest.RandomKernel(rng, false, 3, 3)}},
		{"uint8/valid/nearest", enginetest.RandomArray(rng, nd.Uint8, 9, 8, 3), ndconv.Options{Border: ndconv.Nearest, Mode: ndconv.Valid},
			[]ndconv.Kernel{enginetest.RandomKernel(rng, false, 3, 2)}},
	}
	for _, name := range testDevices(t) {
		dev, err := ndconv.OpenDevice(name)
		if err != nil {
			t.Fatalf("OpenDevice(%q): %v", name, err)
		}
		for _, c := range cases {
			what := name + "/" + c.name
			host, err := ndconv.NewPlan(ndconv.Correlation, c.in.Shape, c.in.DType(), ndconv.Options{Device: "cpu", Border: c.opt.Border, CVal: c.opt.CVal, Mode: c.opt.Mode, DType: c.opt.DType, Exact: true}, c.kernels...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := host.Execute(ctx, ndconv.Array{}, c.in)
			if err != nil {
				t.Fatal(err)
			}
			p, err := dev.NewPlan(ndconv.Correlation, c.in.Shape, c.in.DType(), c.opt, c.kernels...)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if p.Device() != dev.Name() || p.Method() != host.Method() {
				t.Errorf("%s: plan on %s with %v, want %s with %v", what, p.Device(), p.Method(), dev.Name(), host.Method())
			}
			in, err := dev.Upload(c.in)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			out, err := p.ExecuteDevice(ctx, nil, in)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			got, err := out.Download()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || got.DType() != want.DType() {
				t.Errorf("%s: device arrays give other bits than the host API", what)
			}
			// Into a given output, over what it held: the same again.
			again, err := p.ExecuteDevice(ctx, out, in)
			if err != nil || again != out {
				t.Fatalf("%s: executing into a given output: %v", what, err)
			}
			read, _ := nd.New(out.DType(), out.Shape()...)
			if err := out.Read(read); err != nil || !bytes.Equal(read.Bytes(), want.Bytes()) {
				t.Errorf("%s: second execution: %v, or other bits", what, err)
			}
			// The host API on the device's plan.
			if h, err := p.Execute(ctx, ndconv.Array{}, c.in); err != nil || !bytes.Equal(h.Bytes(), want.Bytes()) {
				t.Errorf("%s: Execute on host arrays: %v, or other bits", what, err)
			}
			// In place, where the output can be the input: the result's
			// fresh memory replaces the input's (issue 34).
			if c.in.DType() == want.DType() && slices.Equal(c.in.Shape, want.Shape) {
				x, err := dev.Upload(c.in)
				if err != nil {
					t.Fatal(err)
				}
				if same, err := p.ExecuteDevice(ctx, x, x); err != nil || same != x {
					t.Errorf("%s: in place: %v", what, err)
				} else if got, err := x.Download(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%s: in place: %v, or other bits", what, err)
				}
				x.Free()
			}
			for _, a := range []*ndconv.DeviceArray{in, out} {
				if err := a.Free(); err != nil {
					t.Errorf("%s: Free: %v", what, err)
				}
			}
			if err := p.Close(); err != nil {
				t.Errorf("%s: Close: %v", what, err)
			}
			host.Close()
		}
		testChain(t, dev)
		t.Logf("%s (%s): %d problems and a chain on device arrays", name, dev.Name(), len(cases))
		if err := dev.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
}

// testChain blurs along x, then along y, on the device, and compares with
// the same two steps on the host.
func testChain(t *testing.T, dev *ndconv.Device) {
	t.Helper()
	rng := rand.New(rand.NewPCG(16, 2))
	src := enginetest.RandomArray(rng, nd.Float32, 31, 29)
	kx := ndconv.NewKernel([]int{1, 5}, []float64{1, 4, 6, 4, 1})
	ky := ndconv.NewKernel([]int{3, 1}, []float64{-1, 0, 1})
	opt := ndconv.Options{Border: ndconv.Mirror}
	hostX, err := ndconv.Correlate(ctx, src, ndconv.Options{Border: ndconv.Mirror, Device: "cpu"}, kx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ndconv.Correlate(ctx, hostX, ndconv.Options{Border: ndconv.Mirror, Device: "cpu"}, ky)
	if err != nil {
		t.Fatal(err)
	}
	px, err := dev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, opt, kx)
	if err != nil {
		t.Fatal(err)
	}
	py, err := dev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, opt, ky)
	if err != nil {
		t.Fatal(err)
	}
	in, err := dev.Upload(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := dev.Alloc(ndconv.Float32, src.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := px.ExecuteDevice(ctx, tmp, in); err != nil {
		t.Fatal(err)
	}
	out, err := py.ExecuteDevice(ctx, nil, tmp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := out.Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("%s: two plans chained on the device differ from the host's", dev.Name())
	}
	// Left for the device's Close to free and close.
}

// TestDeviceErrors: mismatched arrays, arrays of another device, a plan
// not made by a device, a freed array, and everything after the device's
// Close.
func TestDeviceErrors(t *testing.T) {
	dev, err := ndconv.OpenDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	other, err := ndconv.OpenDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	k := ndconv.NewKernel([]int{3}, []float64{1, 2, 1})
	p, err := dev.NewPlan(ndconv.Correlation, []int{4, 5}, ndconv.Float32, ndconv.Options{}, k)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := nd.New(nd.Float32, 4, 5)
	in, err := dev.Upload(good)
	if err != nil {
		t.Fatal(err)
	}
	wrongShape, _ := dev.Alloc(ndconv.Float32, 5, 4)
	wrongType, _ := dev.Alloc(ndconv.Float64, 4, 5)
	foreign, _ := other.Upload(good)
	hostPlan, _ := ndconv.NewPlan(ndconv.Correlation, []int{4, 5}, ndconv.Float32, ndconv.Options{}, k)
	defer hostPlan.Close()
	var argErr *nd.ArgumentError
	for name, run := range map[string]func() error{
		"input shape":   func() error { _, err := p.ExecuteDevice(ctx, nil, wrongShape); return err },
		"input type":    func() error { _, err := p.ExecuteDevice(ctx, nil, wrongType); return err },
		"output shape":  func() error { _, err := p.ExecuteDevice(ctx, wrongShape, in); return err },
		"output type":   func() error { _, err := p.ExecuteDevice(ctx, wrongType, in); return err },
		"no input":      func() error { _, err := p.ExecuteDevice(ctx, nil, nil); return err },
		"other device":  func() error { _, err := p.ExecuteDevice(ctx, nil, foreign); return err },
		"host plan":     func() error { _, err := hostPlan.ExecuteDevice(ctx, nil, in); return err },
		"write shape":   func() error { return wrongShape.Write(good) },
		"read type":     func() error { return wrongType.Read(good) },
		"upload broken": func() error { _, err := dev.Upload(ndconv.Array{Shape: []int{3}, Data: []float32{1}}); return err },
	} {
		if err := run(); !errors.As(err, &argErr) {
			t.Errorf("%s: %v, want an *nd.ArgumentError", name, err)
		}
	}
	if _, err := ndconv.OpenDevice("tpu"); err == nil {
		t.Error("OpenDevice(tpu) succeeded")
	}
	if auto, err := ndconv.OpenDevice("auto"); err != nil || auto.Name() == "auto" {
		t.Errorf("OpenDevice(auto): %v", err)
	} else {
		t.Logf("auto opens %s", auto.Name())
		auto.Close()
	}
	if cuda.Available() != nil {
		var u *plan.UnavailableError
		if _, err := ndconv.OpenDevice("cuda:0"); !errors.As(err, &u) {
			t.Errorf("OpenDevice(cuda:0) without CUDA: %v", err)
		}
	}

	freed, _ := dev.Upload(good)
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	if err := freed.Free(); err != nil {
		t.Errorf("second Free: %v", err)
	}
	if _, err := freed.Download(); !errors.Is(err, ndconv.ErrClosed) {
		t.Errorf("Download of a freed array: %v", err)
	}
	if _, err := p.ExecuteDevice(ctx, nil, freed); !errors.Is(err, ndconv.ErrClosed) {
		t.Errorf("executing on a freed array: %v", err)
	}

	out, err := p.ExecuteDevice(ctx, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, run := range map[string]func() error{
		"execute":  func() error { _, err := p.ExecuteDevice(ctx, out, in); return err },
		"host":     func() error { _, err := p.Execute(ctx, ndconv.Array{}, good); return err },
		"download": func() error { _, err := out.Download(); return err },
		"write":    func() error { return in.Write(good) },
		"upload":   func() error { _, err := dev.Upload(good); return err },
		"alloc":    func() error { _, err := dev.Alloc(ndconv.Float32, 2); return err },
		"plan": func() error {
			_, err := dev.NewPlan(ndconv.Correlation, []int{4}, ndconv.Float32, ndconv.Options{}, k)
			return err
		},
	} {
		if err := run(); !errors.Is(err, ndconv.ErrClosed) {
			t.Errorf("%s after the device's Close: %v, want ErrClosed", name, err)
		}
	}
	if err := in.Free(); err != nil {
		t.Errorf("Free after the device's Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("plan Close after the device's Close: %v", err)
	}
}

// TestDeviceConcurrent: goroutines sharing one device, each with its own
// plan and arrays, all get the host API's bits.
func TestDeviceConcurrent(t *testing.T) {
	for _, name := range testDevices(t) {
		dev, err := ndconv.OpenDevice(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(16, 8))
		src := enginetest.RandomArray(rng, nd.Float32, 24, 17)
		var kernels []ndconv.Kernel
		var wants [][]byte
		for range 4 {
			k := enginetest.RandomKernel(rng, false, 3, 3)
			want, err := ndconv.Correlate(ctx, src, ndconv.Options{Device: "cpu"}, k)
			if err != nil {
				t.Fatal(err)
			}
			kernels, wants = append(kernels, k), append(wants, want.Bytes())
		}
		errs := make(chan error, len(kernels))
		for i, k := range kernels {
			go func() {
				errs <- func() error {
					p, err := dev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{}, k)
					if err != nil {
						return err
					}
					defer p.Close()
					for range 3 {
						in, err := dev.Upload(src)
						if err != nil {
							return err
						}
						out, err := p.ExecuteDevice(ctx, nil, in)
						if err != nil {
							return err
						}
						got, err := out.Download()
						if err != nil {
							return err
						}
						if !bytes.Equal(got.Bytes(), wants[i]) {
							return fmt.Errorf("kernel %d: other bits than the host API's", i)
						}
						in.Free()
						out.Free()
					}
					return nil
				}()
			}()
		}
		for range kernels {
			if err := <-errs; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	}
}
