package plan

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestExecutableTurns: one Executable executed by 8 goroutines at once
// gives every call the serial bits (its calls take turns over the
// runner's scratch); Close waits for the call running and the calls after
// it are ErrClosed; a nil context is an ArgumentError, not a panic.
func TestExecutableTurns(t *testing.T) {
	w := make([]float64, 49)
	for i := range w {
		w[i] = float64(i%7) - 2.5
	}
	spec := nd.Spec{Shape: []int{40, 44}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{7, 7}, Weights: w}}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := nd.New(nd.Float32, 40, 44)
	for i, x := range src.Data.([]float32) {
		src.Data.([]float32)[i] = x + float32(i%13) - 6
	}
	for _, m := range []Method{Direct, FFT} {
		e, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := nd.New(nd.Float32, 40, 44)
		if err := e.Execute(context.Background(), want, src); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var bad sync.Map
		for g := range 8 {
			wg.Go(func() {
				dst, _ := nd.New(nd.Float32, 40, 44)
				for c := range 10 {
					if err := e.Execute(context.Background(), dst, src); err != nil || !bytes.Equal(dst.Bytes(), want.Bytes()) {
						bad.Store([2]int{g, c}, err)
					}
				}
			})
		}
		wg.Wait()
		bad.Range(func(k, v any) bool { t.Errorf("%v: goroutine/call %v: other bits (%v)", m, k, v); return true })
		var ae *nd.ArgumentError
		if err := e.Execute(nil, want, src); !errors.As(err, &ae) {
			t.Errorf("%v: a nil context: %v", m, err)
		}
		for g := range 4 {
			wg.Go(func() {
				dst, _ := nd.New(nd.Float32, 40, 44)
				for range 10 {
					err := e.Execute(context.Background(), dst, src)
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil || !bytes.Equal(dst.Bytes(), want.Bytes()) {
						bad.Store(g, err)
					}
				}
			})
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		if err := e.Execute(context.Background(), want, src); !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Execute after Close: %v", m, err)
		}
		wg.Wait()
		bad.Range(func(k, v any) bool { t.Errorf("%v: while closing, goroutine %v: %v", m, k, v); return true })
	}
}

// TestZeroExecutable: a nil or zero Executable's calls are errors, its
// Close nothing.
func TestZeroExecutable(t *testing.T) {
	var ae *nd.ArgumentError
	for _, e := range []*Executable{nil, {}} {
		if err := e.Execute(context.Background(), nd.Array{}, nd.Array{}); !errors.As(err, &ae) {
			t.Errorf("%v: Execute: %v", e, err)
		}
		if err := e.ExecuteDevice(context.Background(), nil, nil); !errors.As(err, &ae) {
			t.Errorf("%v: ExecuteDevice: %v", e, err)
		}
		if err := e.Compile(); !errors.As(err, &ae) {
			t.Errorf("%v: Compile: %v", e, err)
		}
		if err := e.Close(); err != nil || e.Closed() {
			t.Errorf("%v: Close: %v", e, err)
		}
	}
}

// TestEmptyProblem: a problem with an axis of length 0 is planned without
// an engine — auto says cpu and direct, a named method is checked as for
// data (separable needs factors, FFT a float32 problem), a named GPU must
// be usable — and its executions, on host and device arrays, do nothing.
// Workers or DeviceMemory below 0 are ArgumentErrors.
func TestEmptyProblem(t *testing.T) {
	dense := nd.Kernel{Shape: []int{3, 3}, Weights: []float64{1, 2, 3, 4, 5, 6, 7, 8, 10}}
	spec := nd.Spec{Shape: []int{0, 9}, In: nd.Float32, Kernels: []nd.Kernel{dense}, Mode: nd.Full}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Device.Kind != "cpu" || e.Method != Direct || e.Choice.Reason == "" {
		t.Errorf("auto: %v %v (%q), want cpu direct with a reason", e.Device, e.Method, e.Choice.Reason)
	}
	src, _ := nd.New(nd.Float32, 0, 9)
	dst, _ := nd.New(nd.Float32, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, src); err != nil {
		t.Error(err)
	}
	mem, err := OpenMemory(Device{Kind: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := mem.Upload(src)
	out, _ := mem.Alloc(nd.Float32, p.FullShape()...)
	if err := e.ExecuteDevice(context.Background(), out, in); err != nil {
		t.Error(err)
	}
	var ae0 *nd.ArgumentError
	if err := e.ExecuteDevice(context.Background(), nil, in); !errors.As(err, &ae0) {
		t.Errorf("ExecuteDevice to a nil array: %v", err)
	}
	if e, err := New(p, Options{Method: FFT}); err != nil || e.Method != FFT {
		t.Errorf("fft: %v", err)
	}
	var ae *nd.ArgumentError
	for name, opt := range map[string]Options{
		"separable of a dense kernel": {Method: Separable},
		"fft under exact":             {Method: FFT, Exact: true},
		"negative workers":            {Workers: -1},
		"negative device memory":      {DeviceMemory: -1},
	} {
		if _, err := New(p, opt); !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ArgumentError", name, err)
		}
	}
	wide := spec
	wide.In = nd.Float64
	pw, _ := wide.Normalize()
	if _, err := New(pw, Options{Method: FFT}); !errors.As(err, &ae) {
		t.Errorf("fft of a float64 problem: %v, want an ArgumentError", err)
	}
}
