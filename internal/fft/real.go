package fft

import "unsafe"

// rowGroup is how many rows the real transforms take at once: transposed
// into the vector layout, 16 rows of complex64 fill two cache lines per
// element, enough for the inner loops to run long.
const rowGroup = 16

// realRows transforms rows of n real values to n/2+1 coefficients and
// back: for even n by the half-length trick (the even and odd samples as
// one complex sequence of length h = n/2), for odd n by a complex
// transform of length n.
type realRows struct {
	n, h  int
	half  stages      // length h (even n) or n (odd n)
	w, iw []complex64 // exp(∓2πi·k/n), k in [0, h]
}

func newRealRows(n int) realRows {
	r := realRows{n: n, h: n / 2}
	if n%2 == 1 {
		r.half = newStages(n)
		return r
	}
	r.half = newStages(r.h)
	r.w, r.iw = make([]complex64, r.h+1), make([]complex64, r.h+1)
	for k := range r.w {
		c, s := unitRoot(k, n)
		r.w[k], r.iw[k] = complex(float32(c), float32(-s)), complex(float32(c), float32(s))
	}
	return r
}

// scratchLen is the length of each of the two scratch slices forward and
// inverse need for g ≤ rowGroup rows.
func (r *realRows) scratchLen(g int) int { return max(r.h+1, r.half.n) * lanesFor(g) }

// forward transforms g rows: row i of src at src[i*ss:][:n], its
// coefficients to dst[i*ds:][:h+1].
//
// The g rows are laid out as sequences at a stride of lanesFor(g) (the
// lanes past g hold whatever the scratch held: every lane is transformed
// on its own).
func (r *realRows) forward(dst []complex64, ds int, src []float32, ss, g int, z, work []complex64) {
	h, gs := r.h, lanesFor(g)
	if r.n%2 == 1 {
		n := r.n
		for t := range n {
			for i := range g {
				z[t*gs+i] = complex(src[i*ss+t], 0)
			}
		}
		r.half.run(z[:n*gs], work[:n*gs], gs, 0, gs, false)
		for k := 0; k <= h; k++ {
			for i := range g {
				dst[i*ds+k] = z[k*gs+i]
			}
		}
		return
	}
	// The rows' even and odd samples as complex sequences, transformed,
	// then each coefficient from the pair k, h−k of theirs.
	transpose(z, gs, asComplex(src), ss/2, g, h)
	r.half.run(z[:h*gs], work[:h*gs], gs, 0, gs, false)
	realPostGo(work, z, r.w, h, gs, 0, 1)
	realPostGo(work, z, r.w, h, gs, h, h+1)
	if simd.post != nil {
		simd.post(work, z, r.w, realConstants, h, gs)
	} else {
		realPostGo(work, z, r.w, h, gs, 1, h)
	}
	transpose(dst, ds, work, gs, h+1, g)
}

// inverse transforms g rows of h+1 coefficients (src[i*ss:]) back to n
// real values each (dst[i*ds:]), unnormalised: n times the sequence.
func (r *realRows) inverse(dst []float32, ds int, src []complex64, ss, g int, z, work []complex64) {
	h, gs := r.h, lanesFor(g)
	if r.n%2 == 1 {
		n := r.n
		for k := range n {
			for i := range g {
				if k <= h {
					z[k*gs+i] = src[i*ss+k]
				} else {
					c := src[i*ss+n-k]
					z[k*gs+i] = complex(real(c), -imag(c))
				}
			}
		}
		r.half.run(z[:n*gs], work[:n*gs], gs, 0, gs, true)
		for t := range n {
			for i := range g {
				dst[i*ds+t] = real(z[t*gs+i])
			}
		}
		return
	}
	// Z[k] = E + i·O with E = X[k] + conj X[h−k] and O = (X[k] − conj
	// X[h−k])·W^−k: twice the forward's Z, which makes the half-length
	// inverse n times the sequence.
	transpose(work, gs, src, ss, g, h+1)
	if simd.pre != nil {
		simd.pre(z, work, r.iw, realConstants, h, gs)
	} else {
		realPreGo(z, work, r.iw, h, gs)
	}
	r.half.run(z[:h*gs], work[:h*gs], gs, 0, gs, true)
	transpose(asComplex(dst), ds/2, z, gs, h, g)
}

// asComplex views float32 pairs as complex64 values.
func asComplex(x []float32) []complex64 {
	return unsafe.Slice((*complex64)(unsafe.Pointer(unsafe.SliceData(x))), len(x)/2)
}

// RealFFT is a plan for real sequences of one length.
type RealFFT struct {
	rows    realRows
	z, work []complex64
}

// NewRealFFT returns a plan for real sequences of length n ≥ 1; lengths
// 2^a·3^b·5^c·7^d are fast, even ones twice as fast.
func NewRealFFT(n int) *RealFFT {
	if n < 1 {
		panic("fft: length < 1")
	}
	r := newRealRows(n)
	return &RealFFT{rows: r, z: make([]complex64, r.scratchLen(1)), work: make([]complex64, r.scratchLen(1))}
}

// Len is the sequence length.
func (t *RealFFT) Len() int { return t.rows.n }

// Forward computes the n/2+1 non-redundant coefficients of src into dst
// and returns dst; a nil dst is allocated. It panics if a length is wrong.
func (t *RealFFT) Forward(dst []complex64, src []float32) []complex64 {
	if dst == nil {
		dst = make([]complex64, t.rows.h+1)
	}
	if len(src) != t.rows.n || len(dst) != t.rows.h+1 {
		panic("fft: length mismatch")
	}
	t.rows.forward(dst, 0, src, 0, 1, t.z, t.work)
	return dst
}

// Inverse computes n times the real sequence whose n/2+1 coefficients src
// holds into dst and returns dst, as Forward. src must be a real
// sequence's coefficients: the imaginary parts of coefficient 0 and, for
// even n, n/2 zero.
func (t *RealFFT) Inverse(dst []float32, src []complex64) []float32 {
	if dst == nil {
		dst = make([]float32, t.rows.n)
	}
	if len(dst) != t.rows.n || len(src) != t.rows.h+1 {
		panic("fft: length mismatch")
	}
	t.rows.inverse(dst, 0, src, 0, 1, t.z, t.work)
	return dst
}
