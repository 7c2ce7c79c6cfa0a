package cpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// bankSizes cross every group size of the bank loops: each size up to
// 20 (one group of simd.BankSets kernels × rows, one and a part, two),
// then sizes around and at multiples of the group.
var bankSizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 24, 31, 32, 33, 48, 63, 64}

// TestBankSizes runs banks of every size in bankSizes through each CPU
// method that takes them (direct always, separable where every kernel has
// factors) and checks them against the reference: small random 1-D, 2-D
// and 3-D inputs (and 2-D kernels over 3-D inputs, the last axis folded
// into the rows as channels) whose rows are and are not multiples of 8
// values long, or 1; float32, float64, uint8 into uint8 or float32, and
// complex64 with complex weights, run as the engine runs it (its real
// parts, banks of twice the kernels, combined); dense, sparse and
// separable kernels; every border and mode. The engine runs whichever
// loops NDCONV_SIMD leaves it (scripts/test.sh runs this under each).
// NDCONV_BANK_CASES sets the number of random cases per bank size
// (default 12).
func TestBankSizes(t *testing.T) {
	perSize := 12
	if v, err := strconv.Atoi(os.Getenv("NDCONV_BANK_CASES")); err == nil && v > 0 {
		perSize = v
	}
	// Reading the variable here also keys go test's cache on it (the
	// engine reads it at init, before the cache's log starts).
	t.Logf("%s=%q: the %s loops, %d cases per bank size", simd.EnvISA, os.Getenv(simd.EnvISA), ISA(), perSize)
	rng := rand.New(rand.NewPCG(34, 1))
	dtypes := []nd.DType{nd.Float32, nd.Float64, nd.Uint8, nd.Complex64}
	lasts := []int{8, 16, 13, 1, 24, 7, 40, 5}
	cases, runs := 0, map[string]int{}
	for _, bank := range bankSizes {
		for i := range perSize {
			dt := dtypes[i%len(dtypes)]
			rank := 1 + i/len(dtypes)%3
			var shape []int
			switch rank {
			case 1:
				shape = []int{lasts[rng.IntN(len(lasts))]}
			case 2:
				shape = []int{1 + rng.IntN(9), lasts[rng.IntN(len(lasts))]}
			default:
				shape = []int{1 + rng.IntN(4), 2 + rng.IntN(4), lasts[rng.IntN(len(lasts))]}
			}
			krank := rank
			if rank == 3 && rng.IntN(3) == 0 {
				krank = 2 // the last axis as channels
			}
			kshape := make([]int, krank)
			for a := range kshape {
				kshape[a] = 1 + rng.IntN(3)
			}
			separable := rng.IntN(3) == 0
			spec := nd.Spec{
				Shape: shape, In: dt,
				Border:   nd.Border(rng.IntN(5)),
				CVal:     float64(rng.IntN(7)) - 3,
				Mode:     nd.Mode(rng.IntN(3)),
				Convolve: rng.IntN(2) == 0,
			}
			if dt == nd.Uint8 && rng.IntN(2) == 0 {
				spec.Out = nd.Float32
			}
			if dt == nd.Complex64 {
				spec.CValImag = 1.5
			}
			for range bank {
				var k nd.Kernel
				switch {
				case separable && dt != nd.Complex64:
					k = enginetest.RandomFactors(rng, kshape...)
				default:
					k = enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...)
				}
				if dt == nd.Complex64 {
					k.Imag = enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...).Weights
				}
				spec.Kernels = append(spec.Kernels, k)
			}
			if _, err := spec.Normalize(); err != nil {
				spec.Mode = nd.Same // valid mode with a kernel longer than the input
			}
			in := enginetest.RandomArray(rng, dt, shape...)
			c := enginetest.Case{Name: fmt.Sprintf("bank %d, %v %v, kernel %v, %v %v", bank, dt, shape, kshape, spec.Border, spec.Mode), Spec: spec, Input: in}
			checkBank(t, c, runs)
			cases++
		}
	}
	t.Logf("%d cases; runs per method: %v", cases, runs)
}

// checkBank runs c with every CPU method that takes it and compares the
// output with the reference; a panic fails the case by name. runs counts
// the cases each method ran.
func checkBank(t *testing.T, c enginetest.Case, runs map[string]int) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatalf("%s: normalize: %v", c.Name, err)
	}
	for _, m := range methods {
		parts := []*nd.Problem{p}
		var rp nd.RealParts
		if p.Complex() {
			rp = p.RealParts()
			parts = []*nd.Problem{rp.Re, rp.Im}
		}
		supported := true
		for _, q := range parts {
			supported = supported && q != nil && m.supports(q)
		}
		if !supported {
			continue
		}
		runs[m.name]++
		got, err := runBank(m.new, p, rp, c.Input)
		if err != nil {
			t.Fatalf("%s, %s: %v", c.Name, m.name, err)
		}
		msg := ""
		if p.Complex() {
			re, im := c.WantComplex()
			msg = c.CheckComplex(got, re, im)
		} else {
			msg = c.Check(got, c.Want())
		}
		if msg != "" {
			t.Errorf("%s, %s: %s", c.Name, m.name, msg)
		}
	}
}

// runBank executes p with method: a real problem as it is, a complex one
// as its real parts rp (the input split, each part run, the parts
// combined), as the planner does. A panic returns as an error.
func runBank(method func(*nd.Problem, Options) Executable, p *nd.Problem, rp nd.RealParts, in nd.Array) (got nd.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	exec := func(q *nd.Problem, src nd.Array) (nd.Array, error) {
		dst, err := nd.New(q.Out, q.FullShape()...)
		if err != nil {
			return dst, err
		}
		return dst, method(q, Options{Workers: 2}).Execute(context.Background(), dst, src)
	}
	if !p.Complex() {
		return exec(p, in)
	}
	xr, _ := nd.New(rp.Re.In, in.Shape...)
	xi, _ := nd.New(rp.Im.In, in.Shape...)
	nd.SplitParts(xr.Data, xi.Data, in.Data)
	a, err := exec(rp.Re, xr)
	if err != nil {
		return a, err
	}
	b, err := exec(rp.Im, xi)
	if err != nil {
		return b, err
	}
	got, err = nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return got, err
	}
	nd.Combine(rp, got.Data, a.Data.([]float32), b.Data.([]float32))
	return got, nil
}
