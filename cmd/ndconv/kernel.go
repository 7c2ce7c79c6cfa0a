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
	"github.com/ndconv/ndconv/imageio"
)

// loadKernel reads a kernel SPEC: a .npy, .csv or .txt file.
func loadKernel(spec string) (ndconv.Kernel, error) {
	if _, err := os.Stat(spec); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if name, _, ok := strings.Cut(spec, ":"); ok || !strings.Contains(spec, ".") {
				return ndconv.Kernel{}, usagef("kernel %q: no such file, and named filters (%s…) are not available in this version", spec, name)
			}
			return ndconv.Kernel{}, fmt.Errorf("kernel %s: no such file", spec)
		}
		return ndconv.Kernel{}, fmt.Errorf("kernel %s: %w", spec, err)
	}
	var a ndconv.Array
	var err error
	switch ext := strings.ToLower(filepath.Ext(spec)); ext {
	case ".npy":
		a, err = imageio.ReadNPYFile(spec)
	case ".csv", ".txt":
		a, err = imageio.ReadTextFile(spec)
	default:
		return ndconv.Kernel{}, usagef("kernel %s: unknown kernel file type %q (use .npy, .csv or .txt)", spec, ext)
	}
	if err != nil {
		return ndconv.Kernel{}, fmt.Errorf("kernel %s: %w", spec, err)
	}
	if len(a.Shape) == 0 {
		return ndconv.Kernel{}, fmt.Errorf("kernel %s: a 0-D array is not a kernel", spec)
	}
	w := a.Float64s()
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ndconv.Kernel{}, fmt.Errorf("kernel %s: weight %d is %v", spec, i, v)
		}
	}
	return ndconv.NewKernel(a.Shape, w), nil
}
