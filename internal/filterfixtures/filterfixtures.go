// Package filterfixtures loads scipy's (and scikit-image's) outputs of the
// named filters, filters/testdata/filters.json and filters.npy made by
// filters/testdata/make_filters.py, for the tests of package filters (the
// filters against the float64 reference) and of the root package (the
// filters through the engine).
package filterfixtures

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ndconv/ndconv/imageio"
)

// Slice is an [offset, count] pair indexing Fixtures' values.
type Slice [2]int

// Fixtures is filters.json with the numbers of filters.npy.
type Fixtures struct {
	Scipy, Skimage string
	Inputs         map[string]struct {
		Shape []int
		Data  Slice
	}
	Cases []struct {
		Spec, Scipy, Input, Mode string
		CVal                     float64
		Outputs                  []Slice
		// PasswiseDiff is how far scipy's result, which pads every 1-D
		// pass with cval, is from the single correlation Outputs hold.
		PasswiseDiff float64 `json:"passwise_diff"`
	}
	GaborKernels []struct {
		Spec, Skimage string
		Shape         []int
		Weights       Slice
	} `json:"gabor_kernels"`
	values []float64
}

// Values returns the numbers s indexes.
func (f *Fixtures) Values(s Slice) []float64 { return f.values[s[0] : s[0]+s[1]] }

// Load reads filters.json and filters.npy from dir.
func Load(dir string) (*Fixtures, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "filters.json"))
	if err != nil {
		return nil, err
	}
	f := &Fixtures{}
	if err := json.Unmarshal(raw, f); err != nil {
		return nil, fmt.Errorf("filters.json: %w", err)
	}
	a, err := imageio.ReadNPYFile(filepath.Join(dir, "filters.npy"))
	if err != nil {
		return nil, err
	}
	f.values = a.Float64s()
	return f, nil
}

// Compare reports the first value of got farther from want than rel times
// want's largest magnitude, or a NaN where want has none.
func Compare(got, want []float64, rel float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	peak := 0.0
	for _, v := range want {
		peak = max(peak, math.Abs(v))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= rel*peak) {
			return fmt.Errorf("value %d: %v, want %v (|diff| %.3g, max |want| %.3g)", i, got[i], want[i], d, peak)
		}
	}
	return nil
}
