package filters

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// FuzzParse feeds arbitrary specs to Parse. Whatever it accepts must print
// a canonical spec that parses to an equal value, and must build for ranks
// 1 to 3 or fail with an error; what builds must keep the Filter contract.
// Nothing may panic, and MaxWeights bounds every allocation.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"gaussian:sigma=2", "gaussian:sigma=2x1,order=0x1,truncate=3", "gaussian:sigma=0x1e-16x3",
		"uniform:size=5", "uniform", "uniform:size=4x1", "sobel:axis=0", "prewitt", "scharr:axis=-2",
		"laplace", "log:sigma=1.5", "ggm:sigma=1x2", "gradient-magnitude:sigma=0.5,truncate=2",
		"gabor:frequency=0.2,theta=0.5", "gabor:frequency=0.3,sigma_x=1,sigma_y=2,n_stds=2,offset=-1",
		"gabor-bank:orientations=8,frequency=0.2", "",
		"gaussian:", "gaussian:sigma", "gaussian:sigma=", "gaussian:sigma=1,,", "gaussian:sigma=1e400",
		"gaussian:sigma=1e9", "gabor:frequency=1e-300", "gabor-bank:orientations=99999999999,frequency=0.5",
		"sobel:axis=31", "uniform:size=9223372036854775807", ":::", "gaussian:sigma=0x1p-3",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		named, err := Parse(spec)
		if err != nil {
			return
		}
		canonical := named.String()
		again, err := Parse(canonical)
		if err != nil {
			t.Fatalf("Parse(%q) = %#v, whose String %q does not parse: %v", spec, named, canonical, err)
		}
		if !reflect.DeepEqual(again, named) {
			t.Fatalf("Parse(%q) = %#v; its String %q parses to %#v", spec, named, canonical, again)
		}
		for rank := 1; rank <= 3; rank++ {
			built, err := named.Build(rank)
			if err != nil {
				continue
			}
			checkBuilt(t, canonical, rank, built)
		}
	})
}

// checkBuilt checks the Filter contract: at least one filter, each with
// terms of one shape spanning rank axes, a readable Name, finite weights
// within MaxWeights.
func checkBuilt(t *testing.T, spec string, rank int, built []Filter) {
	t.Helper()
	if len(built) == 0 {
		t.Fatalf("%s at rank %d: no filters", spec, rank)
	}
	stored := 0
	for _, f := range built {
		if _, err := Parse(f.Name); err != nil {
			t.Fatalf("%s at rank %d: Name %q does not parse: %v", spec, rank, f.Name, err)
		}
		if len(f.Terms) == 0 || f.Combine > Magnitude {
			t.Fatalf("%s at rank %d: %d terms, combine %v", spec, rank, len(f.Terms), f.Combine)
		}
		for _, k := range f.Terms {
			if _, err := nd.NumElements(k.Shape); err != nil {
				t.Fatalf("%s at rank %d: term shape %v is not one the library accepts: %v", spec, rank, k.Shape, err)
			}
			if len(k.Shape) != rank || !slices.Equal(k.Shape, f.Terms[0].Shape) {
				t.Fatalf("%s at rank %d: term shape %v, first %v", spec, rank, k.Shape, f.Terms[0].Shape)
			}
			parts := [][]float64{k.Weights}
			if k.Factors != nil {
				parts = k.Factors
				for d, factor := range k.Factors {
					if len(factor) != k.Shape[d] || len(factor) == 0 {
						t.Fatalf("%s at rank %d: factor %d has %d taps, shape %v", spec, rank, d, len(factor), k.Shape)
					}
				}
			} else if n := prod(k.Shape); len(k.Weights) != n {
				t.Fatalf("%s at rank %d: %d weights for shape %v", spec, rank, len(k.Weights), k.Shape)
			}
			for _, vs := range parts {
				stored += len(vs)
				for _, v := range vs {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s at rank %d: weight %v", spec, rank, v)
					}
				}
			}
		}
	}
	if stored > MaxWeights {
		t.Fatalf("%s at rank %d: %d weights stored, more than MaxWeights", spec, rank, stored)
	}
}

func prod(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}
