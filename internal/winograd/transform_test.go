package winograd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTransformExact: every F(m, r) the method uses computes the
// correlation y[i] = Σ_j g[j]·d[i+j] (in float64, to rounding), and F(2,3)
// and F(4,3) are Lavin's tables up to the rows' signs.
func TestTransformExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mr := range [][2]int{{2, 3}, {4, 3}, {2, 5}, {4, 5}, {6, 3}} {
		tr, err := NewTransform(mr[0], mr[1])
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			g, d := make([]float64, tr.R), make([]float64, tr.N)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			for i := range d {
				d[i] = rng.NormFloat64()
			}
			for i := range tr.M {
				want := 0.0
				for j := range tr.R {
					want += g[j] * d[i+j]
				}
				got := 0.0
				for k := range tr.N {
					u, v := 0.0, 0.0
					for j := range tr.R {
						u += tr.G[k][j] * g[j]
					}
					for s := range tr.N {
						v += tr.BT[k][s] * d[s]
					}
					got += tr.AT[i][k] * u * v
				}
				if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("F(%d,%d) output %d: %v, want %v", tr.M, tr.R, i, got, want)
				}
			}
		}
		t.Logf("F(%d,%d): growth %.4g, BT %v, G %v, AT %v", tr.M, tr.R, tr.Growth(), tr.BT, tr.G, tr.AT)
	}
}
