package winograd

import (
	"fmt"
	"math"
	"math/big"
)

// Transform is the 1-D Winograd (Toom–Cook) algorithm F(m, r): m outputs of
// an r-tap correlation y[i] = Σ_j g[j]·d[i+j] from n = m + r − 1 inputs as
// y = Aᵀ[(G g) ⊙ (Bᵀ d)]. The N-D tiles apply it along every kernel axis
// (y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A in 2-D).
//
// The matrices are built exactly (math/big) from the points 0, ±1, ±2, …
// and ∞ as the transpose of Toom–Cook's polynomial product c = C⁻¹[(V_r g)
// ⊙ (V_m h)], whose matrix in h, transposed, is the correlation's: Aᵀ =
// V_mᵀ, G = V_r, Bᵀ = C⁻ᵀ; each row of Bᵀ is then scaled to small
// integers, G's row by the inverse, as Lavin's tables are.
type Transform struct {
	M, R, N int
	AT      [][]float64 // m × n
	G       [][]float64 // n × r
	BT      [][]float64 // n × n
}

// points are the finite interpolation points in order of use (∞ is the
// last): small magnitudes first, which keeps the transforms' growth, and
// so the rounding error, least.
var points = []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(2, 1), big.NewRat(-2, 1), big.NewRat(1, 2), big.NewRat(-1, 2)}

// NewTransform builds F(m, r) for m + r − 1 ≤ 8.
func NewTransform(m, r int) (*Transform, error) {
	n := m + r - 1
	if m < 1 || r < 1 || n-1 > len(points) {
		return nil, fmt.Errorf("winograd: no transform F(%d,%d)", m, r)
	}
	pts := points[:n-1]
	// vander is the n × k evaluation matrix of polynomials of k
	// coefficients at the points and at ∞ (the leading coefficient).
	vander := func(k int) [][]*big.Rat {
		v := make([][]*big.Rat, n)
		for t := range n {
			v[t] = make([]*big.Rat, k)
			for c := range k {
				switch {
				case t < n-1:
					v[t][c] = new(big.Rat).SetInt64(1)
					for range c {
						v[t][c].Mul(v[t][c], pts[t])
					}
				case c == k-1:
					v[t][c] = big.NewRat(1, 1)
				default:
					v[t][c] = new(big.Rat)
				}
			}
		}
		return v
	}
	inv, err := invert(vander(n))
	if err != nil {
		return nil, err
	}
	vm, vr := vander(m), vander(r)
	t := &Transform{M: m, R: r, N: n}
	t.AT = make([][]float64, m)
	for i := range m {
		t.AT[i] = make([]float64, n)
		for c := range n {
			t.AT[i][c], _ = vm[c][i].Float64()
		}
	}
	t.G, t.BT = make([][]float64, n), make([][]float64, n)
	for row := range n {
		// Bᵀ = C⁻ᵀ: row `row` of Bᵀ is column `row` of C⁻¹. Scale it by the
		// least common multiple of its denominators over the greatest
		// common divisor of its numerators.
		den, num := big.NewInt(1), new(big.Int)
		for c := range n {
			v := inv[c][row]
			if v.Sign() == 0 {
				continue
			}
			g := new(big.Int).GCD(nil, nil, den, v.Denom())
			den.Mul(den, new(big.Int).Quo(v.Denom(), g))
			num.GCD(nil, nil, num, new(big.Int).Abs(v.Num()))
		}
		s := new(big.Rat).SetFrac(den, num)
		t.BT[row], t.G[row] = make([]float64, n), make([]float64, r)
		for c := range n {
			t.BT[row][c], _ = new(big.Rat).Mul(inv[c][row], s).Float64()
		}
		for c := range r {
			t.G[row][c], _ = new(big.Rat).Quo(vr[row][c], s).Float64()
		}
	}
	return t, nil
}

// invert inverts a square matrix by Gauss–Jordan elimination, exactly.
func invert(a [][]*big.Rat) ([][]*big.Rat, error) {
	n := len(a)
	m := make([][]*big.Rat, n)
	for i := range n {
		m[i] = make([]*big.Rat, 2*n)
		for j := range n {
			m[i][j] = new(big.Rat).Set(a[i][j])
			m[i][n+j] = new(big.Rat)
			if i == j {
				m[i][n+j].SetInt64(1)
			}
		}
	}
	for c := range n {
		p := c
		for p < n && m[p][c].Sign() == 0 {
			p++
		}
		if p == n {
			return nil, fmt.Errorf("winograd: singular evaluation matrix")
		}
		m[c], m[p] = m[p], m[c]
		piv := new(big.Rat).Inv(m[c][c])
		for j := range 2 * n {
			m[c][j].Mul(m[c][j], piv)
		}
		for i := range n {
			if i == c || m[i][c].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Set(m[i][c])
			for j := range 2 * n {
				m[i][j].Sub(m[i][j], new(big.Rat).Mul(f, m[c][j]))
			}
		}
	}
	inv := make([][]*big.Rat, n)
	for i := range n {
		inv[i] = m[i][n:]
	}
	return inv, nil
}

// Growth is the transform's 1-D error constant: the largest, over outputs
// i and taps j, of Σ_t |Aᵀ[i][t]|·|G[t][j]|·Σ_s |Bᵀ[t][s]|. The values the
// tile's float32 arithmetic rounds are at most Growth^d·Σ|w|·max|x| for a
// d-dimensional tile, against Σ|w|·max|x| for the direct sum.
func (t *Transform) Growth() float64 {
	g := 0.0
	for i := range t.M {
		for j := range t.R {
			s := 0.0
			for k := range t.N {
				b := 0.0
				for _, v := range t.BT[k] {
					b += math.Abs(v)
				}
				s += math.Abs(t.AT[i][k]) * math.Abs(t.G[k][j]) * b
			}
			g = max(g, s)
		}
	}
	return g
}
