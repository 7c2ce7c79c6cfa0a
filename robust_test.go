package ndconv_test

// Issue 34's cases for the Go API: empty arrays and zero-length axes, 0-D
// inputs, empty kernels, output sharing memory with the input, one plan
// shared by goroutines, and nil or zero values — each an answer or one
// error, never a panic or a wrong result.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// noPanic runs f, turning a panic into an error that names it, so that a
// case that panics fails as itself instead of ending the test binary.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// emptyShape is the output shape ref gives a problem (its bank axis
// included).
func emptyShape(t *testing.T, s nd.Spec) []int {
	t.Helper()
	if _, err := s.Normalize(); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 0)
	return ref.Correlate(s, x).Shape
}

// TestEmptyArrays: inputs with an axis of length 0 give an empty output of
// scipy's shape (same: the input's; valid: a length-0 axis the kernel
// does not span stays 0; full: a length-0 axis stays 0) for every method,
// every device here and auto, every entry point (Execute, ExecuteChunks,
// the Device API, Correlate/Convolve and the *Slice calls), banks,
// complex and float16 data; valid mode along a kernel axis longer than
// the input stays an error. Before issue 34's fix: an integer divide by
// zero in cpu.ceilDiv.
func TestEmptyArrays(t *testing.T) {
	k33 := ndconv.NewKernel([]int{3, 3}, []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}) // rank 1: separable
	k5 := ndconv.NewKernel([]int{5}, []float64{1, -2, 3, -2, 1})
	complexK := ndconv.ComplexKernel([]int{3, 3}, []complex128{1, 1i, 2, 0, 1 - 1i, 3, 1, 2, 1i})
	cases := []struct {
		shape   []int
		dtype   ndconv.DType
		kernels []ndconv.Kernel
		axes    []int
	}{
		{[]int{0}, ndconv.Float32, []ndconv.Kernel{k5}, nil},
		{[]int{0, 5}, ndconv.Float32, []ndconv.Kernel{k33}, nil},
		{[]int{6, 0}, ndconv.Uint8, []ndconv.Kernel{k33, k33}, nil},
		{[]int{4, 5, 0}, ndconv.Float64, []ndconv.Kernel{k33}, nil},       // a channel axis of length 0
		{[]int{0, 5, 3}, ndconv.Int16, []ndconv.Kernel{k33}, []int{1, 2}}, // an outer axis of length 0
		{[]int{0, 0}, nd.Float16, []ndconv.Kernel{k33}, nil},
		{[]int{0, 7}, ndconv.Complex64, []ndconv.Kernel{k33, k33}, nil},
		{[]int{5, 0}, ndconv.Float32, []ndconv.Kernel{complexK}, nil},
		{[]int{3, 0, 2}, ndconv.Complex128, []ndconv.Kernel{k5}, []int{2}},
	}
	devices := append(testDevices(t), "auto")
	methods := []ndconv.Method{ndconv.Auto, ndconv.Direct, ndconv.Separable, ndconv.FFT}
	for _, c := range cases {
		src, err := nd.New(c.dtype, c.shape...)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []ndconv.Mode{ndconv.Same, ndconv.Valid, ndconv.Full} {
			for _, op := range []ndconv.Operation{ndconv.Correlation, ndconv.Convolution} {
				spec := nd.Spec{Shape: c.shape, In: c.dtype, Kernels: c.kernels, Axes: c.axes, Mode: mode, Convolve: op == ndconv.Convolution}
				_, specErr := spec.Normalize()
				var want []int
				if specErr == nil {
					want = emptyShape(t, spec)
				}
				for _, dev := range devices {
					for _, m := range methods {
						name := fmt.Sprintf("%v %v %v/%v/%v/%v/%v", c.dtype, c.shape, len(c.kernels), mode, op, dev, m)
						opt := ndconv.Options{Mode: mode, Axes: c.axes, Device: dev, Method: m}
						if err := noPanic(func() error { return checkEmpty(op, src, opt, c.kernels, want) }); err != nil {
							switch {
							case specErr != nil && errors.Is(err, errPlan):
								// valid along a kernel axis longer than the
								// input: NewPlan's error, as for data
							case m == ndconv.Separable && c.kernels[0].Imag != nil, m == ndconv.FFT && (c.dtype == ndconv.Float64 || c.dtype == ndconv.Complex128):
								// the method refuses the problem, as it
								// does with data
							default:
								t.Errorf("%s: %v", name, err)
							}
						} else if specErr != nil {
							t.Errorf("%s: no error, want %v", name, specErr)
						}
					}
				}
			}
		}
	}
}

var errPlan = errors.New("NewPlan")

// checkEmpty runs an empty problem through every entry point and checks
// each output's shape; NewPlan's error wraps errPlan.
func checkEmpty(op ndconv.Operation, src ndconv.Array, opt ndconv.Options, kernels []ndconv.Kernel, want []int) error {
	p, err := ndconv.NewPlan(op, src.Shape, src.DType(), opt, kernels...)
	if err != nil {
		return fmt.Errorf("%w: %w", errPlan, err)
	}
	defer p.Close()
	if !slices.Equal(p.Shape(), want) {
		return fmt.Errorf("plan shape %v, want %v", p.Shape(), want)
	}
	if opt.Device == "auto" && (p.Device() != "cpu" || opt.Method == ndconv.Auto && p.Method() != ndconv.Direct) {
		return fmt.Errorf("auto chose %s %v, want cpu direct for an empty problem", p.Device(), p.Method())
	}
	if opt.Method != ndconv.Auto && p.Method() != opt.Method {
		return fmt.Errorf("method %v, want %v", p.Method(), opt.Method)
	}
	shapeOf := func(what string, got ndconv.Array, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !slices.Equal(got.Shape, want) || got.Len() != 0 || got.DType() != p.DType() {
			return fmt.Errorf("%s: %v %v, want %v %v", what, got.DType(), got.Shape, p.DType(), want)
		}
		return nil
	}
	out, err := p.Execute(ctx, ndconv.Array{}, src)
	if err := shapeOf("Execute", out, err); err != nil {
		return err
	}
	calls := 0
	err = p.ExecuteChunks(ctx, src, 1<<10, func(offset int, out ndconv.Array) error {
		calls++
		if offset != 0 || out.Len() != 0 {
			return fmt.Errorf("chunk at %d of %d elements", offset, out.Len())
		}
		return nil
	})
	if err != nil || calls != 1 {
		return fmt.Errorf("ExecuteChunks: %d chunks, %v", calls, err)
	}
	if opt.Device != "auto" {
		dev, err := ndconv.OpenDevice(opt.Device)
		if err != nil {
			return err
		}
		defer dev.Close()
		dp, err := dev.NewPlan(op, src.Shape, src.DType(), opt, kernels...)
		if err != nil {
			return fmt.Errorf("Device.NewPlan: %w", err)
		}
		in, err := dev.Upload(src)
		if err != nil {
			return fmt.Errorf("Upload: %w", err)
		}
		dout, err := dp.ExecuteDevice(ctx, nil, in)
		if err != nil {
			return fmt.Errorf("ExecuteDevice: %w", err)
		}
		got, err := dout.Download()
		if err := shapeOf("Download", got, err); err != nil {
			return err
		}
	}
	call := ndconv.Correlate
	if op == ndconv.Convolution {
		call = ndconv.Convolve
	}
	out, err = call(ctx, src, opt, kernels...)
	if err := shapeOf(op.String(), out, err); err != nil {
		return err
	}
	if data, ok := src.Data.([]float32); ok && p.DType() == ndconv.Float32 {
		slice := ndconv.CorrelateSlice[float32]
		if op == ndconv.Convolution {
			slice = ndconv.ConvolveSlice[float32]
		}
		got, shape, err := slice(ctx, data, src.Shape, opt, kernels...)
		if err != nil || len(got) != 0 || !slices.Equal(shape, want) {
			return fmt.Errorf("%sSlice: %d values of shape %v, %v", op, len(got), shape, err)
		}
	}
	return nil
}

// TestZeroDAndEmptyKernels: a 0-D input is refused on every entry point
// (scipy and the CLI refuse it), and so is a kernel with an axis of
// length 0 (scipy: no filter weights) — each with one ArgumentError.
func TestZeroDAndEmptyKernels(t *testing.T) {
	k3 := ndconv.NewKernel([]int{3}, []float64{1, 2, 1})
	scalar := ndconv.Array{Shape: []int{}, Data: []float32{5}}
	one := ndconv.Array{Shape: []int{4}, Data: []float32{1, 2, 3, 4}}
	dev, err := ndconv.OpenDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var argErr *nd.ArgumentError
	for name, run := range map[string]func() error{
		"0-D NewPlan": func() error {
			_, err := ndconv.NewPlan(ndconv.Correlation, nil, ndconv.Float32, ndconv.Options{}, k3)
			return err
		},
		"0-D Correlate": func() error { _, err := ndconv.Correlate(ctx, scalar, ndconv.Options{}, k3); return err },
		"0-D Convolve":  func() error { _, err := ndconv.Convolve(ctx, scalar, ndconv.Options{}, k3, k3); return err },
		"0-D Slice": func() error {
			_, _, err := ndconv.CorrelateSlice(ctx, []float64{1}, []int{}, ndconv.Options{}, k3)
			return err
		},
		"0-D Device.NewPlan": func() error {
			_, err := dev.NewPlan(ndconv.Correlation, []int{}, ndconv.Float32, ndconv.Options{}, k3)
			return err
		},
		"0-D complex": func() error {
			_, err := ndconv.Correlate(ctx, ndconv.Array{Shape: []int{}, Data: []complex64{1}}, ndconv.Options{}, k3)
			return err
		},
		"empty kernel": func() error {
			_, err := ndconv.Correlate(ctx, one, ndconv.Options{}, ndconv.NewKernel([]int{0}, nil))
			return err
		},
		"empty kernel axis": func() error {
			_, err := ndconv.Correlate(ctx, one, ndconv.Options{}, ndconv.NewKernel([]int{3, 0}, nil))
			return err
		},
		"empty factor": func() error {
			_, err := ndconv.Correlate(ctx, one, ndconv.Options{}, ndconv.SeparableKernel([]float64{}))
			return err
		},
		"empty kernel in a bank": func() error {
			_, err := ndconv.Correlate(ctx, one, ndconv.Options{}, k3, ndconv.NewKernel([]int{0}, nil))
			return err
		},
		"no kernel": func() error { _, err := ndconv.Correlate(ctx, one, ndconv.Options{}); return err },
	} {
		if err := noPanic(run); !errors.As(err, &argErr) {
			t.Errorf("%s: %v, want an *nd.ArgumentError", name, err)
		}
	}
	// Named filters refuse a 0-D input as spanning no axis.
	var rankErr *filters.RankError
	if err := noPanic(func() error {
		_, err := ndconv.Filter(ctx, scalar, ndconv.Options{}, filters.Gaussian{Sigma: []float64{1}})
		return err
	}); !errors.As(err, &rankErr) {
		t.Errorf("0-D Filter: %v, want a *filters.RankError", err)
	}
}

// TestOverlappingOutput: an output sharing memory with the input — the
// input itself, shifted views of one buffer either way, arrays of other
// dtypes over the same bytes — gives the out-of-place result bit for bit
// (the input is copied first), for the direct, separable and FFT methods,
// through Execute and, in place, through the CPU Device API (on the other
// devices here TestDeviceExecute runs it). Before issue
// 34's fix such outputs read outputs as inputs.
func TestOverlappingOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	const h, w = 40, 36
	n := h * w
	kernels := map[ndconv.Method]ndconv.Kernel{
		ndconv.Direct:    enginetest.RandomKernel(rng, false, 5, 5),
		ndconv.Separable: enginetest.RandomFactors(rng, 5, 7),
		ndconv.FFT:       enginetest.RandomKernel(rng, false, 9, 9),
	}
	input := enginetest.RandomArray(rng, nd.Float32, h, w).Data.([]float32)
	for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
		opt := ndconv.Options{Method: m, Device: "cpu"}
		p, err := ndconv.NewPlan(ndconv.Correlation, []int{h, w}, ndconv.Float32, opt, kernels[m])
		if err != nil {
			t.Fatal(err)
		}
		fresh := func() ndconv.Array { return ndconv.Array{Shape: []int{h, w}, Data: slices.Clone(input)} }
		want := mustArray(t)(p.Execute(ctx, ndconv.Array{}, fresh())).Data.([]float32)

		// In place: dst is src.
		x := fresh()
		got := mustArray(t)(p.Execute(ctx, x, x)).Data.([]float32)
		if !slices.Equal(got, want) {
			t.Errorf("%v in place: differs from out of place", m)
		}
		// Shifted views of one buffer, the output after and before the
		// input, by less than a row, a row and more, and most of it.
		for _, shift := range []int{1, 7, w, 3*w + 5, n - 1, -1, -w - 3, -(n - 2)} {
			buf := make([]float32, 2*n)
			at, to := 0, shift
			if shift < 0 {
				at, to = -shift, 0
			}
			copy(buf[at:], input)
			src := ndconv.Array{Shape: []int{h, w}, Data: buf[at : at+n]}
			dst := ndconv.Array{Shape: []int{h, w}, Data: buf[to : to+n]}
			got := mustArray(t)(p.Execute(ctx, dst, src)).Data.([]float32)
			if !slices.Equal(got, want) {
				t.Errorf("%v, output shifted by %d: differs from out of place", m, shift)
			}
		}
		p.Close()

		// Other dtypes over the same bytes: an int16 output over the
		// float32 input's first half, and over its second.
		opt.DType = ndconv.Int16
		p16, err := ndconv.NewPlan(ndconv.Correlation, []int{h, w}, ndconv.Float32, opt, kernels[m])
		if err != nil {
			t.Fatal(err)
		}
		want16 := mustArray(t)(p16.Execute(ctx, ndconv.Array{}, fresh())).Data.([]int16)
		for _, at := range []int{0, n, 2*n - 2} {
			buf := slices.Clone(input)
			raw := nd.AsBytes(buf)
			src := ndconv.Array{Shape: []int{h, w}, Data: buf}
			dst := ndconv.Array{Shape: []int{h, w}, Data: nd.ViewBytes(nd.Int16, raw[at:at+2*n])}
			got := mustArray(t)(p16.Execute(ctx, dst, src)).Data.([]int16)
			if !slices.Equal(got, want16) {
				t.Errorf("%v, int16 output at byte %d of the float32 input: differs from out of place", m, at)
			}
		}
		p16.Close()

		// The Device API in place on the CPU.
		dev, err := ndconv.OpenDevice("cpu")
		if err != nil {
			t.Fatal(err)
		}
		opt.DType = 0
		dp, err := dev.NewPlan(ndconv.Correlation, []int{h, w}, ndconv.Float32, opt, kernels[m])
		if err != nil {
			t.Fatal(err)
		}
		in, err := dev.Upload(fresh())
		if err != nil {
			t.Fatal(err)
		}
		out, err := dp.ExecuteDevice(ctx, in, in)
		if err != nil || out != in {
			t.Fatalf("%v: ExecuteDevice in place: %v, %v", m, out, err)
		}
		if got := mustArray(t)(in.Download()).Data.([]float32); !slices.Equal(got, want) {
			t.Errorf("%v: ExecuteDevice in place differs from out of place", m)
		}
		dev.Close()
	}
	// In place where the output cannot be the input: a bank's.
	dev, _ := ndconv.OpenDevice("cpu")
	defer dev.Close()
	bank, err := dev.NewPlan(ndconv.Correlation, []int{h, w}, ndconv.Float32, ndconv.Options{}, kernels[ndconv.Direct], kernels[ndconv.Direct])
	if err != nil {
		t.Fatal(err)
	}
	in, _ := dev.Upload(ndconv.Array{Shape: []int{h, w}, Data: slices.Clone(input)})
	var argErr *nd.ArgumentError
	if _, err := bank.ExecuteDevice(ctx, in, in); !errors.As(err, &argErr) {
		t.Errorf("a bank's output in place of its input: %v, want an *nd.ArgumentError", err)
	}
}

// TestSharedPlan: one plan shared by 16 goroutines × 20 calls gives each
// call the serial result, for the direct, separable and FFT methods on the
// CPU, through Execute (Compile between), ExecuteChunks and a Device's
// plan's ExecuteDevice; Close while calls run lets each finish or return
// ErrClosed, and every call after it is ErrClosed. Before issue 34's fix
// most calls returned wrong results. scripts/test.sh runs it under -race.
func TestSharedPlan(t *testing.T) {
	const goroutines, calls = 16, 20
	rng := rand.New(rand.NewPCG(34, 4))
	shape := []int{48, 40}
	kernels := map[ndconv.Method]ndconv.Kernel{
		ndconv.Direct:    enginetest.RandomKernel(rng, false, 5, 5),
		ndconv.Separable: enginetest.RandomFactors(rng, 7, 5),
		ndconv.FFT:       enginetest.RandomKernel(rng, false, 11, 11),
	}
	var inputs []ndconv.Array
	for range 4 {
		inputs = append(inputs, enginetest.RandomArray(rng, nd.Float32, shape...))
	}
	for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
		dev, err := ndconv.OpenDevice("cpu")
		if err != nil {
			t.Fatal(err)
		}
		opt := ndconv.Options{Method: m, Device: "cpu", Border: ndconv.Mirror}
		p, err := dev.NewPlan(ndconv.Correlation, shape, ndconv.Float32, opt, kernels[m])
		if err != nil {
			t.Fatal(err)
		}
		// The serial results: Execute's, and ExecuteChunks' (the same bits
		// for the exact methods; FFT's blocks follow the chunks).
		var want, wantChunks [][]byte
		for _, in := range inputs {
			want = append(want, mustArray(t)(p.Execute(ctx, ndconv.Array{}, in)).Bytes())
			wantChunks = append(wantChunks, chunksOf(t, p, in, len(want[0])))
		}
		var wrong, failed sync.Map
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				dst, _ := nd.New(nd.Float32, shape...)
				for c := range calls {
					i := (g + c) % len(inputs)
					var got []byte
					var err error
					switch c % 5 {
					case 0, 1, 2:
						var out ndconv.Array
						if out, err = p.Execute(ctx, dst, inputs[i]); err == nil {
							got = out.Bytes()
						}
						if err == nil && c%5 == 2 {
							err = p.Compile()
						}
					case 3:
						whole := make([]byte, len(want[i]))
						err = p.ExecuteChunks(ctx, inputs[i], 4<<10, func(offset int, out ndconv.Array) error {
							copy(whole[offset*4:], out.Bytes())
							return nil
						})
						if err == nil && !bytes.Equal(whole, wantChunks[i]) {
							wrong.Store(fmt.Sprintf("goroutine %d call %d (chunks)", g, c), true)
						}
						continue
					case 4:
						var in, out *ndconv.DeviceArray
						if in, err = dev.Upload(inputs[i]); err != nil {
							break
						}
						if out, err = p.ExecuteDevice(ctx, nil, in); err != nil {
							break
						}
						var host ndconv.Array
						host, err = out.Download()
						got = host.Bytes()
						in.Free()
						out.Free()
					}
					if err != nil {
						failed.Store(fmt.Sprintf("goroutine %d call %d", g, c), err)
					} else if !bytes.Equal(got, want[i]) {
						wrong.Store(fmt.Sprintf("goroutine %d call %d", g, c), true)
					}
				}
			})
		}
		wg.Wait()
		nWrong := 0
		wrong.Range(func(k, _ any) bool { nWrong++; return true })
		if nWrong > 0 {
			t.Errorf("%v: %d of %d concurrent calls on one plan gave other bits than the serial calls", m, nWrong, goroutines*calls)
		}
		failed.Range(func(k, v any) bool { t.Errorf("%v: %v: %v", m, k, v); return true })

		// Close while calls run: each finishes or is ErrClosed; once
		// Close has returned, every call is ErrClosed.
		var closedCalls, wrongCalls sync.Map
		start := make(chan struct{})
		for g := range goroutines {
			wg.Go(func() {
				<-start
				for c := range calls {
					i := (g + c) % len(inputs)
					out, err := p.Execute(ctx, ndconv.Array{}, inputs[i])
					switch {
					case errors.Is(err, ndconv.ErrClosed):
						closedCalls.Store(g, true)
						return
					case err != nil || !bytes.Equal(out.Bytes(), want[i]):
						wrongCalls.Store(fmt.Sprintf("goroutine %d call %d", g, c), err)
					}
				}
			})
		}
		close(start)
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if _, err := p.Execute(ctx, ndconv.Array{}, inputs[0]); !errors.Is(err, ndconv.ErrClosed) {
			t.Errorf("%v: Execute after Close: %v", m, err)
		}
		if err := p.ExecuteChunks(ctx, inputs[0], 1<<20, func(int, ndconv.Array) error { return nil }); !errors.Is(err, ndconv.ErrClosed) {
			t.Errorf("%v: ExecuteChunks after Close: %v", m, err)
		}
		wg.Wait()
		wrongCalls.Range(func(k, v any) bool { t.Errorf("%v: %v while closing: %v", m, k, v); return true })
		dev.Close()
	}
}

// TestZeroValues: nil and zero Plans, Devices and DeviceArrays, a nil
// context and negative counts are errors (or, for Close and Free, nothing
// to do), never panics. Before issue 34's fix a nil context, a nil Plan's
// Close, a zero Plan's Execute and a zero Device panicked, and Workers: -1
// was accepted.
func TestZeroValues(t *testing.T) {
	k := ndconv.NewKernel([]int{3}, []float64{1, 2, 1})
	src := ndconv.Array{Shape: []int{4}, Data: []float32{1, 2, 3, 4}}
	good, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	dev, err := ndconv.OpenDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	devPlan, err := dev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{}, k)
	if err != nil {
		t.Fatal(err)
	}
	devIn, err := dev.Upload(src)
	if err != nil {
		t.Fatal(err)
	}
	var nilPlan *ndconv.Plan
	var zeroPlan ndconv.Plan
	var nilDev *ndconv.Device
	var zeroDev ndconv.Device
	var nilArr *ndconv.DeviceArray
	var zeroArr ndconv.DeviceArray
	var nilFilter *ndconv.FilterPlan
	var zeroFilter ndconv.FilterPlan
	sink := func(int, ndconv.Array) error { return nil }
	var nilCtx context.Context // the case under test
	var argErr *nd.ArgumentError
	errorCases := map[string]func() error{
		"Workers -1": func() error { _, err := ndconv.Correlate(ctx, src, ndconv.Options{Workers: -1}, k); return err },
		"Workers -1, NewPlan": func() error {
			_, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{Workers: -8}, k)
			return err
		},
		"DeviceMemory -1":   func() error { _, err := ndconv.Correlate(ctx, src, ndconv.Options{DeviceMemory: -1}, k); return err },
		"nil ctx Correlate": func() error { _, err := ndconv.Correlate(nilCtx, src, ndconv.Options{}, k); return err },
		"nil ctx Convolve":  func() error { _, err := ndconv.Convolve(nilCtx, src, ndconv.Options{}, k); return err },
		"nil ctx Slice": func() error {
			_, _, err := ndconv.CorrelateSlice(nilCtx, []float32{1, 2}, []int{2}, ndconv.Options{}, k)
			return err
		},
		"nil ctx Execute": func() error { _, err := good.Execute(nilCtx, ndconv.Array{}, src); return err },
		"nil ctx Chunks":  func() error { return good.ExecuteChunks(nilCtx, src, 1<<20, sink) },
		"nil ctx Device":  func() error { _, err := devPlan.ExecuteDevice(nilCtx, nil, devIn); return err },
		"nil ctx Filter": func() error {
			_, err := ndconv.ApplyFilters(nilCtx, ndconv.Correlation, src, ndconv.Options{})
			return err
		},
		"nil sink":          func() error { return good.ExecuteChunks(ctx, src, 1<<20, nil) },
		"nil plan Execute":  func() error { _, err := nilPlan.Execute(ctx, ndconv.Array{}, src); return err },
		"nil plan Chunks":   func() error { return nilPlan.ExecuteChunks(ctx, src, 1<<20, sink) },
		"nil plan Device":   func() error { _, err := nilPlan.ExecuteDevice(ctx, nil, devIn); return err },
		"nil plan Compile":  func() error { return nilPlan.Compile() },
		"zero plan Execute": func() error { _, err := zeroPlan.Execute(ctx, ndconv.Array{}, src); return err },
		"zero plan Chunks":  func() error { return zeroPlan.ExecuteChunks(ctx, src, 1<<20, sink) },
		"zero plan Device":  func() error { _, err := zeroPlan.ExecuteDevice(ctx, nil, devIn); return err },
		"zero plan Compile": func() error { return zeroPlan.Compile() },
		"nil device Alloc":  func() error { _, err := nilDev.Alloc(ndconv.Float32, 3); return err },
		"nil device Upload": func() error { _, err := nilDev.Upload(src); return err },
		"nil device NewPlan": func() error {
			_, err := nilDev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{}, k)
			return err
		},
		"zero device Alloc":  func() error { _, err := zeroDev.Alloc(ndconv.Float32, 3); return err },
		"zero device Upload": func() error { _, err := zeroDev.Upload(src); return err },
		"zero device NewPlan": func() error {
			_, err := zeroDev.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{}, k)
			return err
		},
		"nil array Download":   func() error { _, err := nilArr.Download(); return err },
		"nil array Read":       func() error { return nilArr.Read(src) },
		"nil array Write":      func() error { return nilArr.Write(src) },
		"zero array Download":  func() error { _, err := zeroArr.Download(); return err },
		"zero array Write":     func() error { return zeroArr.Write(src) },
		"zero array input":     func() error { _, err := devPlan.ExecuteDevice(ctx, nil, &zeroArr); return err },
		"zero array output":    func() error { _, err := devPlan.ExecuteDevice(ctx, &zeroArr, devIn); return err },
		"nil filter Execute":   func() error { _, err := nilFilter.Execute(ctx, src); return err },
		"zero filter Execute":  func() error { _, err := zeroFilter.Execute(ctx, src); return err },
		"zero filter Chunks":   func() error { return zeroFilter.ExecuteChunks(ctx, src, 1<<20, sink) },
		"zero filter Compile":  func() error { return zeroFilter.Compile() },
		"nil ctx filter plan":  func() error { return noFilterCtx(src, k) },
		"nil ctx FilterImage":  func() error { _, err := ndconv.CorrelateImage(nilCtx, nil, ndconv.Options{}, k); return err },
		"nil kernel filter":    func() error { _, err := ndconv.Filter(ctx, src, ndconv.Options{}, nil); return err },
		"nil ctx Filter named": func() error { _, err := ndconv.Filter(nilCtx, src, ndconv.Options{}); return err },
	}
	for name, run := range errorCases {
		if err := noPanic(run); !errors.As(err, &argErr) {
			t.Errorf("%s: %v, want an *nd.ArgumentError", name, err)
		}
	}
	nothing := map[string]func() error{
		"nil plan Close":    nilPlan.Close,
		"zero plan Close":   zeroPlan.Close,
		"nil device Close":  nilDev.Close,
		"zero device Close": zeroDev.Close,
		"nil array Free":    nilArr.Free,
		"zero array Free":   zeroArr.Free,
		"nil filter Close":  nilFilter.Close,
		"zero filter Close": zeroFilter.Close,
		"accessors": func() error {
			_ = fmt.Sprint(nilPlan.Shape(), nilPlan.DType(), nilPlan.Method(), nilPlan.Device(), nilPlan.DeviceChoice(),
				zeroPlan.Shape(), zeroPlan.DType(), zeroPlan.Method(), zeroPlan.Device(), zeroPlan.DeviceChoice(),
				nilDev.Name(), zeroDev.Name(), nilArr.Shape(), nilArr.DType(), nilArr.Device(), zeroArr.Shape(), zeroArr.DType(),
				nilFilter.Shape(), nilFilter.DType(), nilFilter.Method(), nilFilter.Device(), nilFilter.DeviceChoice(),
				zeroFilter.Shape(), zeroFilter.Device(), zeroFilter.Method(), zeroFilter.DeviceChoice(), zeroFilter.Chunked())
			return nil
		},
	}
	for name, run := range nothing {
		if err := noPanic(run); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// chunksOf is p's output of src (n bytes) through ExecuteChunks in chunks
// of at most 4 KiB.
func chunksOf(t *testing.T, p *ndconv.Plan, src ndconv.Array, n int) []byte {
	t.Helper()
	whole := make([]byte, n)
	err := p.ExecuteChunks(ctx, src, 4<<10, func(offset int, out ndconv.Array) error {
		copy(whole[offset*4:], out.Bytes())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return whole
}

// noFilterCtx runs a FilterPlan with a nil context.
func noFilterCtx(src ndconv.Array, k ndconv.Kernel) error {
	fp, err := ndconv.NewFilterPlan(ndconv.Correlation, src.Shape, src.DType(), ndconv.Options{}, ndconv.KernelFilter("k", k))
	if err != nil {
		return err
	}
	defer fp.Close()
	var nilCtx context.Context
	_, err = fp.Execute(nilCtx, src)
	return err
}

// TestEmptyFilters: named filters — a bank of single-kernel filters and
// filters of several terms — and Go images with no pixel give empty
// results of the right shape through Filter, FilterPlan.ExecuteChunks and
// CorrelateImage.
func TestEmptyFilters(t *testing.T) {
	named := []filters.Named{filters.GaussianGradientMagnitude{Sigma: []float64{1}}, filters.Uniform{Size: []int{3}}}
	for _, shape := range [][]int{{0, 5}, {4, 0}, {0, 0, 3}} {
		src, _ := nd.New(nd.Uint8, shape...)
		out, err := ndconv.Filter(ctx, src, ndconv.Options{}, named...)
		if want := append(slices.Clone(shape), 2); err != nil || !slices.Equal(out.Shape, want) || out.Len() != 0 {
			t.Errorf("%v: Filter: %v %v, want %v", shape, out.Shape, err, want)
		}
		fp, err := ndconv.NewFilterPlan(ndconv.Correlation, shape, nd.Uint8, ndconv.Options{}, ndconv.KernelFilter("k", ndconv.NewKernel([]int{3}, []float64{1, 2, 1})))
		if err != nil {
			t.Fatal(err)
		}
		if err := fp.ExecuteChunks(ctx, src, 1<<10, func(int, ndconv.Array) error { return nil }); err != nil {
			t.Errorf("%v: FilterPlan.ExecuteChunks: %v", shape, err)
		}
		fp.Close()
	}
	for _, r := range []image.Rectangle{image.Rect(0, 0, 0, 0), image.Rect(0, 0, 5, 0), image.Rect(2, 3, 2, 9)} {
		img := image.NewRGBA(r)
		out, err := ndconv.CorrelateImage(ctx, img, ndconv.Options{}, ndconv.NewKernel([]int{3, 3}, make([]float64, 9)))
		if err != nil || out.Bounds().Dx() != r.Dx() || out.Bounds().Dy() != r.Dy() {
			t.Errorf("%v: CorrelateImage: %v, %v", r, out, err)
		}
	}
}
