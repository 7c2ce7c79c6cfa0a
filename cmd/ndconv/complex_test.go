package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// TestComplex: the CLI filters complex .npy data with real or complex
// weights (.npy, or .csv written as Python writes complex numbers) and a
// complex --cval, and writes what the library computes; it refuses a real
// --dtype for complex results, a complex cval for real data and a format
// of real samples for a complex output, leaving nothing behind.
func TestComplex(t *testing.T) {
	dir := t.TempDir()
	in := nd.Array{Shape: []int{6, 7}, Data: make([]complex64, 42)}
	for i := range in.Data.([]complex64) {
		in.Data.([]complex64)[i] = complex(float32(i%5)-2, float32(i%3)*0.5)
	}
	writeNPY(t, filepath.Join(dir, "in.npy"), in)
	real := ramp(nd.Int16, 6, 7)
	writeNPY(t, filepath.Join(dir, "real.npy"), real)
	weights := []complex128{1, 2i, -0.5 + 1i, 0.25, 3 - 1i, 0}
	kc := ndconv.ComplexKernel([]int{2, 3}, weights)
	writeNPY(t, filepath.Join(dir, "kc.npy"), nd.Array{Shape: []int{2, 3}, Data: weights})
	writeText(t, filepath.Join(dir, "kc.csv"), "1, 2j, (-0.5+1j)\n0.25, 3-1J, 0\n")
	writeText(t, filepath.Join(dir, "kr.csv"), "1, 2, -1\n")
	writeText(t, filepath.Join(dir, "kc1.csv"), "1+1j, 2\n")

	for _, c := range []struct {
		args  []string
		input nd.Array
		opt   ndconv.Options
		k     ndconv.Kernel
		conv  bool
	}{
		{[]string{"-k", "kc.npy"}, in, ndconv.Options{}, kc, false},
		{[]string{"-k", "kc.csv", "--border", "constant", "--cval", "1-2j"}, in, ndconv.Options{Border: ndconv.Constant, CVal: 1, CValImag: -2}, kc, false},
		{[]string{"-k", "kc.csv", "--dtype", "complex128"}, in, ndconv.Options{DType: nd.Complex128}, kc, true},
		{[]string{"-k", "kr.csv", "--mode", "full", "--border", "wrap"}, in, ndconv.Options{Mode: ndconv.Full, Border: ndconv.Wrap}, ndconv.NewKernel([]int{3}, []float64{1, 2, -1}), false},
		{[]string{"-k", "kc.npy", "--border", "constant", "--cval", "3"}, real, ndconv.Options{Border: ndconv.Constant, CVal: 3}, kc, false},
	} {
		name := "in.npy"
		if c.input.DType() != nd.Complex64 {
			name = "real.npy"
		}
		opName := "correlate"
		if c.conv {
			opName = "convolve"
		}
		args := append(append([]string{opName, "-q"}, c.args...), name, "out.npy")
		code, _, stderr := ndconvCLI(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		got, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy"))
		if err != nil {
			t.Fatal(err)
		}
		var want ndconv.Array
		if c.conv {
			want, err = ndconv.Convolve(context.Background(), c.input, c.opt, c.k)
		} else {
			want, err = ndconv.Correlate(context.Background(), c.input, c.opt, c.k)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !want.DType().IsComplex() || got.DType() != want.DType() || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%v: the CLI's %v output differs from the library's %v", args, got.DType(), want.DType())
		}
	}

	for _, c := range []struct {
		code int
		want string
		args []string
	}{
		{1, "complex output", []string{"-k", "kc.npy", "--dtype", "float32", "in.npy", "bad.npy"}},
		{1, "complex output", []string{"-k", "kr.csv", "--dtype", "uint8", "in.npy", "bad.npy"}},
		{1, "complex cval", []string{"-k", "kc.npy", "--cval", "1+1j", "real.npy", "bad.npy"}},
		{1, "factors are real", []string{"-k", "outer:kc1.csv,kr.csv", "in.npy", "bad.npy"}},
		{2, "--cval", []string{"-k", "kc.npy", "--cval", "1+", "in.npy", "bad.npy"}},
		{2, ".npy", []string{"-k", "kc.npy", "in.npy", "bad.tif"}},
		{2, ".npy", []string{"-k", "kr.csv", "in.npy", "bad.png"}},
	} {
		code, _, stderr := ndconvCLI(t, dir, append([]string{"correlate"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q in one line", c.args, code, stderr, c.code, c.want)
		}
		assertNoOutput(t, dir, c.args[len(c.args)-1])
	}
}
