package ndconv_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/internal/filterfixtures"
	"github.com/ndconv/ndconv/nd"
)

// TestNamedFiltersScipy runs scipy's named-filter fixtures through the
// engine by every method that applies: ndconv.Filter must give scipy's
// result (the filters themselves are checked against the float64
// reference in package filters). Inputs are float64 and, a second time,
// float32, whose results agree to float32 precision.
func TestNamedFiltersScipy(t *testing.T) {
	fx, err := filterfixtures.Load("filters/testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if len(fx.Cases) < 100 {
		t.Fatalf("only %d fixture cases", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		in := fx.Inputs[c.Input]
		named, err := filters.Parse(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		border, err := nd.ParseBorder(c.Mode)
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for _, o := range c.Outputs {
			want = append(want, fx.Values(o)...)
		}
		if len(c.Outputs) > 1 { // a bank: interleave, output[..., i]
			want = interleave(want, len(c.Outputs))
		}
		x64 := nd.Array{Shape: in.Shape, Data: slices.Clone(fx.Values(in.Data))}
		x32 := nd.Array{Shape: in.Shape, Data: toFloat32(fx.Values(in.Data))}
		for _, method := range []ndconv.Method{ndconv.Auto, ndconv.Direct, ndconv.Separable} {
			for _, x := range []nd.Array{x64, x32} {
				name := fmt.Sprintf("%s/%s/%s/%v/%v", c.Spec, c.Input, c.Mode, method, x.DType())
				opt := ndconv.Options{Border: border, CVal: c.CVal, Method: method}
				got, err := ndconv.Filter(ctx, x, opt, named)
				var ae *nd.ArgumentError
				if method == ndconv.Separable && errors.As(err, &ae) {
					continue // not separable: laplace, gabor
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				tol := 1e-9
				if x.DType() == nd.Float32 {
					tol = 2e-5
				}
				if err := filterfixtures.Compare(got.Float64s(), want, tol); err != nil {
					t.Errorf("%s vs %s: %v", name, c.Scipy, err)
				}
			}
		}
	}
}

func interleave(v []float64, k int) []float64 {
	n := len(v) / k
	out := make([]float64, len(v))
	for i := range k {
		for j := range n {
			out[j*k+i] = v[i*n+j]
		}
	}
	return out
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// TestFilterRoundsOnce checks that filters of several terms compute in
// float and round once: the gradient magnitude of a uint8 image equals the
// float result rounded half to even and saturated.
func TestFilterRoundsOnce(t *testing.T) {
	ctx := context.Background()
	x := nd.Array{Shape: []int{6, 7}, Data: make([]uint8, 42)}
	for i := range x.Data.([]uint8) {
		x.Data.([]uint8)[i] = uint8((i * 37) % 251)
	}
	named := []filters.Named{filters.GaussianGradientMagnitude{Sigma: []float64{0.8}}, filters.GaussianLaplace{Sigma: []float64{1}}, filters.Sobel{Axis: 0}}
	for _, n := range named {
		got, err := ndconv.Filter(ctx, x, ndconv.Options{}, n)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := ndconv.Filter(ctx, x, ndconv.Options{DType: nd.Float64}, n)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range exact.Float64s() {
			want := nd.Round(v, nd.Uint8)
			if g := float64(got.Data.([]uint8)[i]); g != want && math.Abs(v-math.Round(v)) > 1e-3 {
				t.Fatalf("%s: value %d is %v, want %v (float %v)", n, i, g, want, v)
			}
		}
	}
}

// TestFilterBank mixes filters of different shapes and a kernel file's
// kernel in one bank: each output equals the filter run alone.
func TestFilterBank(t *testing.T) {
	ctx := context.Background()
	x := nd.Array{Shape: []int{9, 8}, Data: make([]float32, 72)}
	for i := range x.Data.([]float32) {
		x.Data.([]float32)[i] = float32(math.Sin(float64(i)))
	}
	named := []filters.Named{filters.Gaussian{Sigma: []float64{1}}, filters.Gaussian{Sigma: []float64{2}}, filters.GaussianGradientMagnitude{Sigma: []float64{1}}, filters.Laplace{}}
	fs, err := ndconv.BuildFilters(2, nil, named...)
	if err != nil {
		t.Fatal(err)
	}
	fs = append(fs, ndconv.KernelFilter("box", ndconv.NewKernel([]int{2, 2}, []float64{1, 1, 1, 1})))
	bank, err := ndconv.ApplyFilters(ctx, ndconv.Correlation, x, ndconv.Options{}, fs...)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{9, 8, len(fs)}; !slices.Equal(bank.Shape, want) {
		t.Fatalf("shape %v, want %v", bank.Shape, want)
	}
	b := bank.Float64s()
	for i, f := range fs {
		alone, err := ndconv.ApplyFilters(ctx, ndconv.Correlation, x, ndconv.Options{}, f)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range alone.Float64s() {
			if b[j*len(fs)+i] != v {
				t.Fatalf("%s: value %d in the bank is %v, alone %v", f.Name, j, b[j*len(fs)+i], v)
			}
		}
	}
	// Valid mode with kernels of different sizes has no one output shape.
	if _, err := ndconv.ApplyFilters(ctx, ndconv.Correlation, x, ndconv.Options{Mode: ndconv.Valid}, fs...); err == nil {
		t.Error("a valid-mode bank of different sizes was accepted")
	}
}

// TestFilterPlanExecuteInto: ExecuteInto writes the caller's array with
// Execute's values (a bank of one kernel shape, and a filter of several
// terms), and refuses an output of another shape or dtype.
func TestFilterPlanExecuteInto(t *testing.T) {
	ctx := context.Background()
	x := nd.Array{Shape: []int{9, 8}, Data: make([]float32, 72)}
	for i := range x.Data.([]float32) {
		x.Data.([]float32)[i] = float32(math.Sin(float64(i)))
	}
	for _, named := range [][]filters.Named{
		{filters.Gaussian{Sigma: []float64{1.5}}}, // one bank
		{filters.Gaussian{Sigma: []float64{1}}, filters.Sobel{Axis: 1}},
		{filters.GaussianGradientMagnitude{Sigma: []float64{1}}},
	} {
		fs, err := ndconv.BuildFilters(2, nil, named...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ndconv.NewFilterPlan(ndconv.Correlation, x.Shape, nd.Float32, ndconv.Options{Device: "cpu"}, fs...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.Execute(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		dst, _ := nd.New(p.DType(), p.Shape()...)
		nd.Store(dst.Data, 0, 1, []float64{7}) // not zero: every value must be written
		got, err := p.ExecuteInto(ctx, dst, x)
		if err != nil {
			t.Fatal(err)
		}
		if &got.Data.([]float32)[0] != &dst.Data.([]float32)[0] || !slices.Equal(got.Data.([]float32), want.Data.([]float32)) {
			t.Errorf("%v: ExecuteInto did not write Execute's values into the given array", named)
		}
		wrong, _ := nd.New(nd.Float64, p.Shape()...)
		if _, err := p.ExecuteInto(ctx, wrong, x); err == nil {
			t.Errorf("%v: a float64 output for a float32 plan was taken", named)
		}
		p.Close()
	}
}
