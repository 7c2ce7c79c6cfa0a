package winograd

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// Variant is the tile a problem runs with: F(m^d, r^d), d = len(Axes)
// kernel axes of r taps each, tiles of m^d outputs from n^d inputs.
type Variant struct {
	*Transform
	Axes []int // the input axes the kernel spans (extent r), in order
}

// Name is the variant as papers write it, e.g. F(4×4,3×3).
func (v *Variant) Name() string {
	m, r := make([]string, len(v.Axes)), make([]string, len(v.Axes))
	for i := range v.Axes {
		m[i], r[i] = strconv.Itoa(v.M), strconv.Itoa(v.R)
	}
	return "F(" + strings.Join(m, "×") + "," + strings.Join(r, "×") + ")"
}

// Dims is the number of kernel axes.
func (v *Variant) Dims() int { return len(v.Axes) }

// TileInputs is n^d, the transformed tile's size.
func (v *Variant) TileInputs() int { return pow(v.N, v.Dims()) }

// TileOutputs is m^d.
func (v *Variant) TileOutputs() int { return pow(v.M, v.Dims()) }

func pow(b, e int) int {
	p := 1
	for range e {
		p *= b
	}
	return p
}

// Depth counts the float32 roundings on any path from an input to an
// output: at most n per pass of the input and output transforms (one per
// term of an n-term sum, the small coefficients' products included), one
// for the transformed weight and one for the product.
func (v *Variant) Depth() int { return 2*v.Dims()*v.N + 2 }

// ErrorBound bounds |winograd − exact| of any output before its rounding
// to the output dtype, for kernels of absolute sum at most absSum and
// input values (and cval) of magnitude at most maxAbs: Depth·u·Growth^d·
// Σ|w|·max|x| with u = 2⁻²⁴, the first-order bound of float32 arithmetic
// on the tile's absolute values (each computed value is at most the same
// computation on |Aᵀ|, |G|, |Bᵀ|, |w| and max|x|). A float32 direct sum's
// is taps·u·Σ|w|·max|x|; Growth^d is 16 for F(2×2,3×3), 860 for
// F(4×4,3×3) and F(2×2,5×5), 64 for F(2×2×2,3×3×3). Measured errors
// (the tests log them) are far below: rounding errors do not all align.
func (v *Variant) ErrorBound(absSum, maxAbs float64) float64 {
	return float64(v.Depth()) * 0x1p-24 * math.Pow(v.Growth(), float64(v.Dims())) * absSum * maxAbs
}

// overflowMargin keeps every value of the float32 tiles finite: their
// magnitudes are at most Growth^d·Σ|w|·max|x| (ErrorBound's argument).
const overflowMargin = 0x1p120

// Overflows reports whether inputs of magnitude up to maxAbs could leave
// float32's range inside the tiles (or maxAbs is not finite): such inputs
// run the direct method.
func (v *Variant) Overflows(absSum, maxAbs float64) bool {
	return !(math.Pow(v.Growth(), float64(v.Dims()))*absSum*maxAbs <= overflowMargin)
}

// kernelAxes are the input axes of p's kernel with more than one tap.
func kernelAxes(p *nd.Problem) []int {
	var axes []int
	for a, k := range p.KShape {
		if k > 1 {
			axes = append(axes, a)
		}
	}
	return axes
}

// Why says why the Winograd method cannot run p (nil: it can). It takes
// 3×3 and 5×5 kernels over two axes and 3×3×3 kernels over three (other
// axes of extent 1: channels, a batch), real and with finite float32
// weights, a finite cval, and float32 accumulation (float64 and wide
// integer data run exactly by the other methods).
func Why(p *nd.Problem) error {
	if p.Wide {
		return fmt.Errorf("winograd accumulates in float32, and %v data or %v output needs float64", p.In, p.Out)
	}
	axes := kernelAxes(p)
	shape := make([]string, len(axes))
	same := true
	for i, a := range axes {
		shape[i] = strconv.Itoa(p.KShape[a])
		same = same && p.KShape[a] == p.KShape[axes[0]]
	}
	r := 0
	if len(axes) > 0 {
		r = p.KShape[axes[0]]
	}
	if !same || !(len(axes) == 2 && (r == 3 || r == 5) || len(axes) == 3 && r == 3) {
		k := strings.Join(shape, "×")
		if k == "" {
			k = "one tap"
		}
		return fmt.Errorf("winograd takes 3×3, 5×5 and 3×3×3 kernels, not %s", k)
	}
	return p.RealFinite32("winograd")
}

// Tiles lists the output tile widths m each kernel size can take, the
// default first: 3×3 F(4×4) and F(2×2); 5×5 F(2×2) and F(4×4); 3×3×3
// F(2×2×2) only (F(4×4×4,3×3×3)'s bound, 860^1.5 times the direct sum's,
// is not worth its arithmetic).
func Tiles(r, dims int) []int {
	switch {
	case dims == 2 && r == 3:
		return []int{4, 2}
	case dims == 2 && r == 5:
		return []int{2, 4}
	case dims == 3 && r == 3:
		return []int{2}
	}
	return nil
}

// TileFromEnv is the tile width NDCONV_WINOGRAD_TILE asks for (the bench's
// and the tests' way to compare variants; no tuning field yet), 0 for the
// default.
func TileFromEnv() int {
	m, _ := strconv.Atoi(os.Getenv("NDCONV_WINOGRAD_TILE"))
	return m
}

// New chooses p's variant: tile m (0: the default of Tiles) over the
// kernel axes.
func New(p *nd.Problem, m int) (*Variant, error) {
	if err := Why(p); err != nil {
		return nil, &nd.UnsupportedError{What: "problem for the winograd method", Value: err.Error()}
	}
	axes := kernelAxes(p)
	r := p.KShape[axes[0]]
	tiles := Tiles(r, len(axes))
	if m == 0 {
		m = tiles[0]
	}
	ok := false
	for _, t := range tiles {
		ok = ok || t == m
	}
	if !ok {
		return nil, &nd.UnsupportedError{What: "winograd tile", Value: strconv.Itoa(m), Supported: fmt.Sprint(tiles)}
	}
	t, err := NewTransform(m, r)
	if err != nil {
		return nil, err
	}
	return &Variant{Transform: t, Axes: axes}, nil
}

// Weights returns the transformed kernels U = G g Gᵀ (per axis) of p's
// bank, U[k][t] for kernel k and tile input t (row-major over the kernel
// axes), computed in float64 from the float32-rounded weights and rounded
// once to float32: the values both engines multiply by.
func (v *Variant) Weights(p *nd.Problem) [][]float32 {
	d := v.Dims()
	us := make([][]float32, len(p.Kernels))
	for k, w := range p.Kernels {
		// The kernel's taps in row-major order over the kernel axes are
		// Dense's order: the other axes have extent 1.
		cur := make([]float64, len(w.Dense))
		for i, x := range w.Dense {
			cur[i] = float64(float32(x))
		}
		// Transform axis by axis: shape goes from r^d to n^d, axis a
		// replaced in turn (outer axes first).
		shape := make([]int, d)
		for i := range shape {
			shape[i] = v.R
		}
		for a := range d {
			next := make([]float64, len(cur)/shape[a]*len(v.G))
			shape[a] = applyAxis(next, cur, shape, a, v.G)
			cur = next
		}
		u := make([]float32, len(cur))
		for i, x := range cur {
			u[i] = float32(x)
		}
		us[k] = u
	}
	return us
}

// applyAxis multiplies axis a of src (shape) by mat (rows × shape[a]),
// each sum over mat's nonzero entries in column order, into dst; it
// returns the rows. Leaving out a zero entry changes no sum of finite
// values (a sum that starts at +0 never becomes −0), and the tiles and
// the transformed weights are only used for finite inputs and weights.
func applyAxis[F float32 | float64](dst, src []F, shape []int, a int, mat [][]F) int {
	outer, inner := 1, 1
	for i := range a {
		outer *= shape[i]
	}
	for i := a + 1; i < len(shape); i++ {
		inner *= shape[i]
	}
	rows, cols := len(mat), shape[a]
	for o := range outer {
		for r := range rows {
			row := mat[r]
			for in := range inner {
				var s F
				for c := range cols {
					if row[c] != 0 {
						s += row[c] * src[(o*cols+c)*inner+in]
					}
				}
				dst[(o*rows+r)*inner+in] = s
			}
		}
	}
	return rows
}
