package winograd

import (
	"context"
	"math"
	"runtime"

	"github.com/ndconv/ndconv/nd"
)

// Runner executes a problem on host arrays (the direct method's engine,
// which CPU passes in: this package sits below the engines).
type Runner interface {
	Execute(ctx context.Context, dst, src nd.Array) error
}

// Options are the CPU engine's.
type Options struct {
	Workers int // goroutines; 0: GOMAXPROCS
	Tile    int // output tile width m; 0: the default (Tiles)
	// Direct runs the inputs the tiles cannot carry (NaN, Inf, values
	// that could overflow float32): the direct method, whose bits those
	// outputs must carry.
	Direct Runner
}

// CPU is the Winograd method on the CPU, the method's reference: each
// output tile's input window is gathered by the border rule (nd.Border.
// Index, the direct method's mapping), converted to float32, transformed
// once for the whole bank (Bᵀ d B), multiplied elementwise by each
// kernel's transformed weights, transformed back (Aᵀ M A) and stored
// rounded and saturated by nd.Store, interleaved for a bank.
type CPU struct {
	p       *nd.Problem
	v       *Variant
	opt     Options
	u       [][]float32
	bt, at  [][]float32
	absSum  float64
	grid    []int   // tiles per output axis (outputs on axes the kernel does not span)
	maps    [][]int // per input axis: input index of padded position q (−1: cval)
	kaxis   []int   // per input axis: its index among the kernel axes, or −1
	strides []int   // the input's, in elements
	ostride []int   // the output's, in voxels
	usedDir bool
}

// NewCPU prepares p for the Winograd method on the CPU.
func NewCPU(p *nd.Problem, opt Options) (*CPU, error) {
	v, err := New(p, opt.Tile)
	if err != nil {
		return nil, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	e := &CPU{p: p, v: v, opt: opt, u: v.Weights(p), bt: to32(v.BT), at: to32(v.AT), absSum: p.WeightAbsSum()}
	rank := len(p.InShape)
	e.grid, e.maps, e.kaxis = make([]int, rank), make([][]int, rank), make([]int, rank)
	e.strides, e.ostride = nd.Strides(p.InShape), nd.Strides(p.OutShape)
	for a := range rank {
		e.kaxis[a] = -1
		e.grid[a] = p.OutShape[a]
		span := p.OutShape[a]
		for i, ka := range v.Axes {
			if ka == a {
				e.kaxis[a] = i
				e.grid[a] = ceilDiv(p.OutShape[a], v.M)
				span = e.grid[a]*v.M + v.N - v.M
			}
		}
		e.maps[a] = make([]int, span)
		for q := range span {
			i, ok := 0, false
			if p.InShape[a] > 0 {
				i, ok = p.Border.Index(q-p.Shift[a], p.InShape[a])
			}
			if !ok {
				i = -1
			}
			e.maps[a][q] = i
		}
	}
	return e, nil
}

// Variant is the tile the engine runs.
func (e *CPU) Variant() *Variant { return e.v }

// UsedDirect reports whether an input has run the direct method.
func (e *CPU) UsedDirect() bool { return e.usedDir }

func to32(m [][]float64) [][]float32 {
	out := make([][]float32, len(m))
	for i, r := range m {
		out[i] = make([]float32, len(r))
		for j, v := range r {
			out[i][j] = float32(v)
		}
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// tilesPerItem is how many tiles one work item computes.
const tilesPerItem = 64

// Execute correlates src into dst by the Winograd method, or by the
// direct method where the input holds NaN or Inf or values whose tiles
// could overflow.
func (e *CPU) Execute(ctx context.Context, dst, src nd.Array) error {
	p := e.p
	for _, n := range p.OutShape {
		if n == 0 {
			return ctx.Err()
		}
	}
	x, ok := src.Data.([]float32)
	if !ok {
		x = make([]float32, src.Len())
		nd.Load(x, src.Data, 0)
	}
	maxAbs := 0.0
	if p.Border == nd.Constant {
		maxAbs = math.Abs(float64(float32(p.CVal)))
	}
	for _, v := range x {
		a := math.Abs(float64(v))
		if !(a <= math.MaxFloat32) {
			maxAbs = math.Inf(1)
			break
		}
		maxAbs = max(maxAbs, a)
	}
	if e.v.Overflows(e.absSum, maxAbs) {
		if e.opt.Direct == nil {
			return &nd.UnsupportedError{What: "input for the winograd method", Value: "non-finite or too large values", Supported: "finite values (the direct method runs the others)"}
		}
		e.usedDir = true
		return e.opt.Direct.Execute(ctx, dst, src)
	}
	out, direct := dst.Data.([]float32)
	if !direct {
		n, _ := nd.NumElements(p.FullShape())
		out = make([]float32, n)
	}
	tiles := 1
	for _, g := range e.grid {
		tiles *= g
	}
	items := ceilDiv(tiles, tilesPerItem)
	nt := e.v.TileInputs()
	scratch := make([][4][]float32, e.opt.Workers)
	for w := range scratch {
		for i := range scratch[w] {
			scratch[w][i] = make([]float32, nt)
		}
	}
	err := nd.ForEach(e.opt.Workers, items, func() bool { return ctx.Err() != nil }, func(w, item int) {
		for t := item * tilesPerItem; t < min(tiles, (item+1)*tilesPerItem); t++ {
			e.tile(out, x, t, scratch[w])
		}
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !direct {
		nd.Store(dst.Data, 0, 1, out)
	}
	return nil
}

// tile computes output tile t (a linear index over grid).
func (e *CPU) tile(out, x []float32, t int, s [4][]float32) {
	p, v := e.p, e.v
	rank, d, n, m := len(p.InShape), v.Dims(), v.N, v.M
	var org [8]int // output origin of the tile per axis (rank ≤ 8 is not assumed below)
	origin := org[:0]
	if rank > len(org) {
		origin = make([]int, 0, rank)
	}
	origin = origin[:rank]
	for a := rank - 1; a >= 0; a-- {
		g := t % e.grid[a]
		t /= e.grid[a]
		if e.kaxis[a] >= 0 {
			g *= m
		}
		origin[a] = g
	}
	// Gather: base offset over the axes the kernel does not span, then the
	// n^d positions of the kernel axes (row-major in kernel-axis order).
	base, constant := 0, false
	strides := e.strides
	for a := rank - 1; a >= 0; a-- {
		if e.kaxis[a] < 0 {
			i := e.maps[a][origin[a]]
			if i < 0 {
				constant = true
			}
			base += i * strides[a]
		}
	}
	cval := float32(p.CVal)
	buf := s[0]
	var idx [3]int
	for c := range v.TileInputs() {
		r := c
		for i := d - 1; i >= 0; i-- {
			idx[i] = r % n
			r /= n
		}
		val := cval
		if !constant {
			off := base
			for i, a := range v.Axes {
				j := e.maps[a][origin[a]+idx[i]]
				if j < 0 {
					off = -1
					break
				}
				off += j * strides[a]
			}
			if off >= 0 {
				val = x[off]
			}
		}
		buf[c] = val
	}
	// V = Bᵀ d B, axis by axis.
	shape := [3]int{n, n, n}
	vin := transform(buf, s[1], shape[:d], e.bt)
	// The other three buffers hold M and the output transform's passes.
	free := s[1]
	if d%2 == 1 {
		free = s[0]
	}
	bank := len(p.Kernels)
	mul := s[2][:len(vin)]
	os := e.ostride
	obase := 0
	for a := range rank {
		if e.kaxis[a] < 0 {
			obase += origin[a] * os[a]
		}
	}
	for k, u := range e.u {
		for i := range mul {
			mul[i] = u[i] * vin[i]
		}
		yshape := [3]int{n, n, n}
		y := transformOut(mul, free, s[3], yshape[:d], e.at)
		for c := range v.TileOutputs() {
			r := c
			off := obase
			inside := true
			for i := d - 1; i >= 0; i-- {
				j := r % m
				r /= m
				a := v.Axes[i]
				o := origin[a] + j
				if o >= p.OutShape[a] {
					inside = false
					break
				}
				off += o * os[a]
			}
			if inside {
				out[off*bank+k] = y[c]
			}
		}
	}
}

// transform applies mat (n × n) along every axis of x (shape, all n),
// into scratch buffers alternately; it returns the result, which is
// either tmp or x.
func transform(x, tmp []float32, shape []int, mat [][]float32) []float32 {
	cur, other := x, tmp
	for a := range shape {
		shape[a] = applyAxis(other, cur, shape, a, mat)
		cur, other = other, cur
	}
	return cur
}

// transformOut applies mat (m × n) along every axis of x (shape, all n),
// through the scratch buffers a and b; it returns the m^d result.
func transformOut(x, a, b []float32, shape []int, mat [][]float32) []float32 {
	cur := x
	for i := range shape {
		next := a
		if &cur[0] == &a[0] {
			next = b
		}
		shape[i] = applyAxis(next, cur, shape, i, mat)
		cur = next
	}
	return cur
}
