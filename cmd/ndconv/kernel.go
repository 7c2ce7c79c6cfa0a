package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
)

// kernelFiles are the extensions of kernel files.
var kernelFiles = []string{".npy", ".csv", ".txt"}

// kernelSpec is one -k SPEC: a kernel read from a file, or a named filter
// that is fitted to the input's axes once the input is read.
type kernelSpec struct {
	text   string
	kernel ndconv.Kernel
	named  filters.Named // nil for a kernel file
}

// parseKernelSpec reads a kernel file, or outer:a,b,… factor files, or
// parses a named filter: an existing file wins, then outer:, then a filter
// name; a spec that looks like a path
// and exists as neither is a missing file.
func parseKernelSpec(spec string) (kernelSpec, error) {
	_, statErr := os.Stat(spec)
	if statErr == nil {
		k, err := loadKernelFile(spec)
		return kernelSpec{text: spec, kernel: k}, err
	}
	if !errors.Is(statErr, fs.ErrNotExist) {
		return kernelSpec{}, fmt.Errorf("kernel %s: %w", spec, statErr)
	}
	if files, ok := strings.CutPrefix(spec, outerPrefix); ok {
		k, err := loadFactorFiles(spec, files)
		return kernelSpec{text: spec, kernel: k}, err
	}
	named, err := filters.Parse(spec)
	if err == nil {
		return kernelSpec{text: spec, named: named}, nil
	}
	var unknown *filters.UnknownFilterError
	if errors.As(err, &unknown) && looksLikePath(spec) {
		return kernelSpec{}, fmt.Errorf("kernel %s: no such file", spec)
	}
	return kernelSpec{}, &usageError{fmt.Errorf("kernel %q: %w", spec, err)}
}

// looksLikePath reports whether spec is more likely a file name than a
// named filter: it has a directory or a kernel file's extension.
func looksLikePath(spec string) bool {
	if strings.ContainsRune(spec, os.PathSeparator) || strings.Contains(spec, "/") {
		return true
	}
	ext := strings.ToLower(filepath.Ext(spec))
	for _, e := range kernelFiles {
		if ext == e {
			return true
		}
	}
	return false
}

// loadKernelFile reads a kernel: a .npy, .csv or .txt file.
func loadKernelFile(path string) (ndconv.Kernel, error) {
	var a ndconv.Array
	var err error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		a, err = imageio.ReadNPYFile(path)
	case ".csv", ".txt":
		a, err = imageio.ReadTextFile(path)
	default:
		return ndconv.Kernel{}, usagef("kernel %s: unknown kernel file type %q (use %s, or a named filter: %s)",
			path, ext, strings.Join(kernelFiles, ", "), strings.Join(filters.Names(), ", "))
	}
	if err != nil {
		return ndconv.Kernel{}, fmt.Errorf("kernel %s: %w", path, err)
	}
	if len(a.Shape) == 0 {
		return ndconv.Kernel{}, fmt.Errorf("kernel %s: a 0-D array is not a kernel", path)
	}
	re, im := a.Parts()
	k := ndconv.NewKernel(a.Shape, re.Float64s())
	if im.Data != nil {
		k.Imag = im.Float64s()
	}
	for i, v := range k.Weights {
		var w any = v
		if k.Imag != nil {
			w = complex(v, k.Imag[i])
		}
		if finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }; !finite(v) || k.Imag != nil && !finite(k.Imag[i]) {
			return ndconv.Kernel{}, fmt.Errorf("kernel %s: weight %d is %v", path, i, w)
		}
	}
	return k, nil
}

// outerPrefix starts a separable kernel SPEC: outer:a.csv,b.csv gives one
// 1-D factor file per kernel axis, in axis order.
const outerPrefix = "outer:"

// loadFactorFiles reads the comma-separated factor files of an outer: SPEC
// into a separable kernel.
func loadFactorFiles(spec, files string) (ndconv.Kernel, error) {
	var factors [][]float64
	for _, path := range strings.Split(files, ",") {
		path = strings.TrimSpace(path)
		if path == "" {
			return ndconv.Kernel{}, usagef("kernel %q: an empty factor file name (write outer:a.csv,b.csv, one 1-D factor per kernel axis)", spec)
		}
		k, err := loadKernelFile(path)
		if err != nil {
			return ndconv.Kernel{}, err
		}
		if len(k.Shape) != 1 {
			return ndconv.Kernel{}, fmt.Errorf("kernel %s: factor %s has shape %v; each factor must be 1-D", spec, path, k.Shape)
		}
		if k.Imag != nil {
			return ndconv.Kernel{}, fmt.Errorf("kernel %s: factor %s is complex; factors are real (give a complex kernel as one file)", spec, path)
		}
		factors = append(factors, k.Weights)
	}
	return ndconv.SeparableKernel(factors...), nil
}

// withGaborBank turns every gabor filter into a bank of n orientations
// (--gabor-bank N); n = 0 leaves the specs alone.
func withGaborBank(specs []kernelSpec, n int) ([]kernelSpec, error) {
	if n == 0 {
		return specs, nil
	}
	found := false
	for i, s := range specs {
		if g, ok := s.named.(filters.Gabor); ok {
			specs[i].named = filters.GaborBank{Gabor: g, Orientations: n}
			found = true
		}
	}
	if !found {
		return nil, usagef("--gabor-bank %d: no gabor filter to make a bank of; add -k gabor:frequency=F[,…]", n)
	}
	return specs, nil
}

// buildFilters fits the specs to rank axes, in the order given.
func buildFilters(specs []kernelSpec, rank int) ([]filters.Filter, error) {
	var out []filters.Filter
	for _, s := range specs {
		if s.named == nil {
			out = append(out, ndconv.KernelFilter(s.text, s.kernel))
			continue
		}
		fs, err := s.named.Build(rank)
		if err != nil {
			return nil, &usageError{fmt.Errorf("kernel %q: %w", s.text, err)}
		}
		out = append(out, fs...)
	}
	return out, nil
}
