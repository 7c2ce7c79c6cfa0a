package ndconv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/nd"
)

// TestBatch: a batch of arrays of three kinds (shape, dtype) gives each
// array ApplyFilters' bytes, in order, with one plan per kind; a failing
// array is reported and the rest go on; a closed batch refuses work.
func TestBatch(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(27, 4))
	k := nd.Kernel{Shape: []int{3, 3}, Weights: []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}}
	fs := []filters.Filter{ndconv.KernelFilter("k", k)}
	opt := ndconv.Options{Device: "cpu", Border: ndconv.Mirror}
	kinds := []struct {
		shape []int
		dtype nd.DType
	}{{[]int{16, 12}, nd.Float32}, {[]int{7, 9}, nd.Uint8}, {[]int{16, 12}, nd.Uint8}}
	var srcs []ndconv.Array
	for i := range 12 {
		kind := kinds[i%len(kinds)]
		n := kind.shape[0] * kind.shape[1]
		var a ndconv.Array
		if kind.dtype == nd.Float32 {
			v := make([]float32, n)
			for j := range v {
				v[j] = float32(rng.IntN(250))
			}
			a = nd.Array{Shape: kind.shape, Data: v}
		} else {
			v := make([]uint8, n)
			for j := range v {
				v[j] = uint8(rng.IntN(250))
			}
			a = nd.Array{Shape: kind.shape, Data: v}
		}
		srcs = append(srcs, a)
	}
	// A 1-D array: the 3×3 kernel does not fit it, an error of its own.
	bad, _ := nd.New(nd.Float32, 5)
	srcs = slices.Insert(srcs, 5, bad)

	b := ndconv.NewBatch(ndconv.Correlation, opt, fs...)
	i := 0
	for got, err := range b.All(ctx, slices.Values(srcs)) {
		src := srcs[i]
		want, wantErr := ndconv.ApplyFilters(ctx, ndconv.Correlation, src, opt, fs...)
		switch {
		case (err != nil) != (wantErr != nil):
			t.Errorf("array %d: error %v, ApplyFilters' %v", i, err, wantErr)
		case err == nil && !bytes.Equal(got.Bytes(), want.Bytes()):
			t.Errorf("array %d (%v %v): other bytes than ApplyFilters'", i, src.Shape, src.DType())
		}
		i++
	}
	if i != len(srcs) {
		t.Errorf("%d results for %d arrays", i, len(srcs))
	}
	for _, kind := range kinds {
		p1, err1 := b.Plan(kind.shape, kind.dtype)
		p2, err2 := b.Plan(slices.Clone(kind.shape), kind.dtype)
		if err1 != nil || err2 != nil || p1 != p2 {
			t.Errorf("%v %v: plans %p, %p (%v, %v): want one, reused", kind.shape, kind.dtype, p1, p2, err1, err2)
		}
	}
	// Breaking out of the loop stops the batch.
	n := 0
	for range b.All(ctx, slices.Values(srcs)) {
		if n++; n == 2 {
			break
		}
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	if _, err := b.Execute(ctx, srcs[0]); !errors.Is(err, ndconv.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	// A cancelled context ends the sequence with its error.
	c, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range ndconv.NewBatch(ndconv.Correlation, opt, fs...).All(c, slices.Values(srcs)) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
	}
}

// ExampleBatch filters a sequence of frames of one size with one plan.
func ExampleBatch() {
	blur := ndconv.KernelFilter("box", nd.Kernel{Shape: []int{3}, Weights: []float64{1, 1, 1}})
	b := ndconv.NewBatch(ndconv.Correlation, ndconv.Options{Device: "cpu"}, blur)
	defer b.Close()
	frames := func(yield func(ndconv.Array) bool) {
		for i := range 3 {
			a := nd.Array{Shape: []int{4}, Data: []float32{0, float32(i), 0, 0}}
			if !yield(a) {
				return
			}
		}
	}
	for out, err := range b.All(context.Background(), frames) {
		fmt.Println(out.Float64s(), err)
	}
	// Output:
	// [0 0 0 0] <nil>
	// [1 1 1 0] <nil>
	// [2 2 2 0] <nil>
}
