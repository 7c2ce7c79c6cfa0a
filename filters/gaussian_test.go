package filters

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestGaussian1DScipy compares with weights scipy computed
// (testdata/make_gaussian.py).
func TestGaussian1DScipy(t *testing.T) {
	raw, err := os.ReadFile("testdata/gaussian1d.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixtures struct {
		Cases []struct {
			Sigma, Truncate float64
			Weights         []float64
		}
	}
	if err := json.Unmarshal(raw, &fixtures); err != nil {
		t.Fatal(err)
	}
	for _, c := range fixtures.Cases {
		got, err := Gaussian1D(c.Sigma, c.Truncate)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.Weights) {
			t.Fatalf("sigma %v: %d taps, scipy has %d", c.Sigma, len(got), len(c.Weights))
		}
		for i := range got {
			if math.Abs(got[i]-c.Weights[i]) > 1e-15 {
				t.Errorf("sigma %v tap %d: %v, scipy %v", c.Sigma, i, got[i], c.Weights[i])
			}
		}
	}
}

func TestGaussian1DInvalid(t *testing.T) {
	for _, c := range [][2]float64{{0, 4}, {-1, 4}, {math.NaN(), 4}, {math.Inf(1), 4}, {1, 0}, {1, -2}} {
		if _, err := Gaussian1D(c[0], c[1]); err == nil {
			t.Errorf("Gaussian1D(%v, %v) accepted", c[0], c[1])
		}
	}
}
