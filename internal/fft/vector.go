package fft

// passFunc is one whole Stockham pass over vl sequences in the vector
// layout (vl a multiple of vectorLanes), as the assembly passes of
// passes_amd64.s take it: tw the stage's twiddles of the direction, c its
// constants (stage.fc or stage.ic).
type passFunc func(dst, src, tw []complex64, c []float32, m, ns, vl int)

// vectorLanes is the multiple of sequences the SIMD loops need.
const vectorLanes = 8

// simdSet is one instruction set's loops; a nil one runs in Go.
type simdSet struct {
	name   string
	passes map[int]passFunc // by radix; the others run the Go passes
	// mul is MulInto over the first len(dst) rounded down to a multiple
	// of vectorLanes.
	mul func(dst, a, b []complex64)
	// post and pre are realPostGo and realPreGo (post for k in [1, h)
	// only) with gs a multiple of vectorLanes.
	post, pre func(dst, z, w []complex64, c []float32, h, gs int)
	// transpose is transposeGo over whole 8×8 blocks.
	transpose func(dst []complex64, ds int, src []complex64, ss, rows, cols int)
}

// simdSets lists the instruction sets this CPU runs the assembly in,
// widest first (none under noasm or on other architectures); simd is the
// one used.
var (
	simdSets []simdSet
	simd     simdSet
)

// lanesFor returns the stride, at least g, at which g sequences are laid
// out in the vector layout: a multiple of vectorLanes where the SIMD
// loops run, so that they take every pass.
func lanesFor(g int) int {
	if len(simd.passes) == 0 {
		return g
	}
	return (g + vectorLanes - 1) / vectorLanes * vectorLanes
}

// transpose sets dst[c*ds + r] = src[r*ss + c] for r < rows, c < cols.
func transpose(dst []complex64, ds int, src []complex64, ss, rows, cols int) {
	if simd.transpose == nil || rows < 8 || cols < 8 {
		transposeGo(dst, ds, src, ss, rows, cols)
		return
	}
	r8, c8 := rows/8*8, cols/8*8
	simd.transpose(dst, ds, src, ss, r8, c8)
	// The rows past r8, then the columns past c8 of the first r8.
	if r8 < rows {
		transposeGo(dst[r8:], ds, src[r8*ss:], ss, rows-r8, cols)
	}
	if c8 < cols {
		transposeGo(dst[c8*ds:], ds, src[c8:], ss, r8, cols-c8)
	}
}

func transposeGo(dst []complex64, ds int, src []complex64, ss, rows, cols int) {
	for r := range rows {
		row := src[r*ss:][:cols]
		for c, v := range row {
			dst[c*ds+r] = v
		}
	}
}

// realConstants are the constants of the real pre- and post-processing
// loops: conjugation, −i/2 and +i as lane-pair multipliers.
var realConstants = []float32{1, -1, 0.5, -0.5, -1, 1}

// realPostGo sets, for k in [k0, k1) and every lane v < gs,
//
//	a = z[k], b = conj z[(h−k) mod h], e = a + b, d = a − b
//	dst[k] = e/2 + w[k]·(−i·d/2)
//
// element k being the gs values at k·gs: the coefficients of the real
// sequences whose even and odd samples z's half-length transforms hold.
func realPostGo(dst, z, w []complex64, h, gs, k0, k1 int) {
	for k := k0; k < k1; k++ {
		zk, zc, out := z[(k%h)*gs:][:gs], z[((h-k)%h)*gs:][:gs], dst[k*gs:][:gs]
		wk := w[k]
		for i := range out {
			a, b := zk[i], zc[i]
			b = complex(real(b), -imag(b))
			e, d := a+b, a-b
			o := complex(0.5*imag(d), -0.5*real(d))
			out[i] = complex(0.5*real(e), 0.5*imag(e)) + mul(wk, o)
		}
	}
}

// realPreGo sets, for k in [0, h) and every lane v < gs,
//
//	a = x[k], b = conj x[h−k], o = (a − b)·iw[k]
//	dst[k] = a + b + i·o
//
// twice the half-length transform whose real post-processing gives x.
func realPreGo(dst, x, iw []complex64, h, gs int) {
	for k := range h {
		xk, xc, out := x[k*gs:][:gs], x[(h-k)*gs:][:gs], dst[k*gs:][:gs]
		wk := iw[k]
		for i := range out {
			a, b := xk[i], xc[i]
			b = complex(real(b), -imag(b))
			e, o := a+b, mul(a-b, wk)
			out[i] = e + complex(-imag(o), real(o))
		}
	}
}
