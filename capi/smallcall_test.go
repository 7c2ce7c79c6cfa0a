package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/nd"
)

// namedSpecs are named filters the Python face sends as one plan.
var namedSpecs = []string{"sobel:axis=1", "prewitt:axis=0", "laplace", "gaussian:sigma=1.0x1.0,order=0x0,truncate=4.0",
	"gaussian:sigma=1.0x2.0,order=1x0,truncate=4.0", "uniform:size=3x3", "gaussian_gradient_magnitude:sigma=1"}

// TestNamedFilterSameBits: a named filter through the C API gives the
// bits of ndconv.FilterPlan (which the C API ran before it ran
// single-kernel filters' kernel plans directly), in place too.
func TestNamedFilterSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, dt := range []nd.DType{nd.Float32, nd.Float64, nd.Uint8, nd.Int16} {
		for _, name := range namedSpecs {
			shape := []int{13, 17}
			src, err := nd.New(dt, shape...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range shape[0] * shape[1] {
				nd.Store(src.Data, i, 1, []float64{float64(rng.IntN(200)) + rng.Float64()})
			}
			named, err := filters.Parse(name)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := ndconv.BuildFilters(2, nil, named)
			if err != nil {
				t.Fatal(err)
			}
			fp, err := ndconv.NewFilterPlan(ndconv.Correlation, shape, dt, ndconv.Options{Border: nd.Reflect, Device: "cpu"}, fs...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fp.Execute(context.Background(), src)
			fp.Close()
			if err != nil {
				t.Fatal(err)
			}
			spec := fmt.Sprintf(`{"op":"correlate","shape":[13,17],"dtype":%q,"border":"reflect","device":"cpu","filter":%q}`, dt, name)
			id := mustPlan(t, spec, nil)
			in := src.Bytes()
			got := make([]byte, len(want.Bytes()))
			var e errBuf
			if rc := planExecute(id, unsafe.Pointer(&in[0]), int64(len(in)), unsafe.Pointer(&got[0]), int64(len(got)), e.ptr(), e.len()); rc != 0 {
				t.Fatalf("%s %v: %s", name, dt, e.String())
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s %v: the C API's bits differ from FilterPlan's", name, dt)
			}
			if len(got) != len(in) {
				continue
			}
			// In place: the output over the input.
			inplace := bytes.Clone(in)
			if rc := planExecute(id, unsafe.Pointer(&inplace[0]), int64(len(inplace)), unsafe.Pointer(&inplace[0]), int64(len(inplace)), e.ptr(), e.len()); rc != 0 {
				t.Fatalf("%s %v in place: %s", name, dt, e.String())
			}
			if !bytes.Equal(inplace, want.Bytes()) {
				t.Errorf("%s %v in place: the bits differ from FilterPlan's", name, dt)
			}
		}
	}
}

// TestNamedFilterWritesOutput: a single-kernel named filter writes the
// caller's output rather than an array of its own that is then copied
// (it did: a 64×64 float64 sobel allocated 33 kB a call).
func TestNamedFilterWritesOutput(t *testing.T) {
	for _, name := range []string{"sobel:axis=1", "gaussian:sigma=1", "uniform:size=3"} {
		id := mustPlan(t, fmt.Sprintf(`{"op":"correlate","shape":[64,64],"dtype":"float64","border":"reflect","device":"cpu","workers":1,"filter":%q}`, name), nil)
		src := make([]float64, 64*64)
		dst := make([]float64, 64*64)
		var e errBuf
		call := func() {
			if rc := planExecute(id, unsafe.Pointer(&src[0]), 8*64*64, unsafe.Pointer(&dst[0]), 8*64*64, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
		}
		call()
		const calls = 50
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range calls {
			call()
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / calls; per >= 8*64*64/4 {
			t.Errorf("%s: %d bytes allocated a call, the output is %d", name, per, 8*64*64)
		}
	}
}

func BenchmarkSmallExecute(b *testing.B) {
	w9 := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	cases := []struct {
		name, spec string
		w          []float64
	}{
		{"correlate3x3", `"kernel_shape":[3,3],"nkernels":1`, w9},
		{"correlate1d", `"kernel_shape":[3],"nkernels":1,"axes":[1]`, []float64{1, 2, 1}},
		{"correlate1d0", `"kernel_shape":[3],"nkernels":1,"axes":[0]`, []float64{1, 2, 1}},
		{"sobel", `"filter":"sobel:axis=1"`, nil},
		{"prewitt", `"filter":"prewitt:axis=1"`, nil},
		{"laplace", `"filter":"laplace"`, nil},
		{"gaussian", `"filter":"gaussian:sigma=1.0x1.0,order=0x0,truncate=4.0"`, nil},
		{"gaussian_d1", `"filter":"gaussian:sigma=1.0x1.0,order=1x0,truncate=4.0"`, nil},
		{"uniform", `"filter":"uniform:size=3x3"`, nil},
		{"uniform1d", `"filter":"uniform:size=3","axes":[1]`, nil},
	}
	for _, dt := range []string{"float32", "float64", "uint8"} {
		size := map[string]int{"float32": 4, "float64": 8, "uint8": 1}[dt]
		for _, n := range []int{16, 64} {
			for _, c := range cases {
				b.Run(fmt.Sprintf("%s/%d/%s", dt, n, c.name), func(b *testing.B) {
					spec := fmt.Sprintf(`{"op":"correlate","shape":[%d,%d],"dtype":%q,"border":"reflect","device":"cpu",%s}`, n, n, dt, c.spec)
					var id int64
					var e errBuf
					if rc := planNew(cstr(spec), f64ptr(c.w), int64(len(c.w)), &id, e.ptr(), e.len()); rc != 0 {
						b.Fatalf("%s: %s", spec, e.String())
					}
					defer planFree(id, nil, 0)
					src := make([]byte, n*n*size)
					dst := make([]byte, n*n*size)
					b.ReportAllocs()
					for b.Loop() {
						if rc := planExecute(id, unsafe.Pointer(&src[0]), int64(len(src)), unsafe.Pointer(&dst[0]), int64(len(dst)), e.ptr(), e.len()); rc != 0 {
							b.Fatal(e.String())
						}
					}
				})
			}
		}
	}
}
