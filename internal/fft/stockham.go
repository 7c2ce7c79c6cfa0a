package fft

import "math"

// stage is one radix pass of a Stockham transform: it combines radix
// sub-transforms of length span into transforms of length span·radix.
type stage struct {
	radix, span int
	// tw[k*(radix−1) + r−1] = exp(∓2πi·r·k/(span·radix)), forward and
	// inverse.
	tw, itw []complex64
	// cos and sin of 2π·m/radix, for the odd-radix butterfly.
	cos, sin []float32
	// fc and ic are the SIMD passes' constants, forward and inverse: sign
	// and −sign of the ∓i rotation, then for odd radices cos and sin of
	// 2π·q/radix for q = 1 … (radix−1)/2.
	fc, ic []float32
}

// stages is the pass list of a length-n transform.
type stages struct {
	n    int
	list []stage
}

// factorize splits n into the radices of its passes: fours first, then a
// two, then odd primes in increasing order.
func factorize(n int) []int {
	var radices []int
	for n%4 == 0 {
		radices = append(radices, 4)
		n /= 4
	}
	if n%2 == 0 {
		radices = append(radices, 2)
		n /= 2
	}
	for p := 3; n > 1; p += 2 {
		for n%p == 0 {
			radices = append(radices, p)
			n /= p
		}
		if p*p > n && n > 1 {
			radices = append(radices, n)
			break
		}
	}
	return radices
}

func newStages(n int) stages {
	s := stages{n: n}
	span := 1
	for _, r := range factorize(n) {
		st := stage{radix: r, span: span}
		st.tw = make([]complex64, span*(r-1))
		st.itw = make([]complex64, span*(r-1))
		for k := range span {
			for j := 1; j < r; j++ {
				c, sn := unitRoot(j*k, span*r)
				st.tw[k*(r-1)+j-1] = complex(float32(c), float32(-sn))
				st.itw[k*(r-1)+j-1] = complex(float32(c), float32(sn))
			}
		}
		if r%2 == 1 {
			st.cos, st.sin = make([]float32, r), make([]float32, r)
			for m := range r {
				c, sn := unitRoot(m, r)
				st.cos[m], st.sin[m] = float32(c), float32(sn)
			}
		}
		for _, sign := range []float32{1, -1} {
			c := []float32{sign, -sign}
			for q := 1; 2*q < r && r%2 == 1; q++ {
				c = append(c, st.cos[q])
			}
			for q := 1; 2*q < r && r%2 == 1; q++ {
				c = append(c, st.sin[q])
			}
			if sign > 0 {
				st.fc = c
			} else {
				st.ic = c
			}
		}
		s.list = append(s.list, st)
		span *= r
	}
	return s
}

// unitRoot returns cos and sin of 2π·k/n in float64, reduced to the first
// octant first so that large k lose nothing to the argument's rounding.
func unitRoot(k, n int) (c, s float64) {
	k %= n
	// Angle 2π·k/n = quarter-turns q plus a remainder k'/n of a turn.
	q := (4 * k) / n
	rem := 4*k - q*n // in [0, n): the remainder, in units of 1/(4n) turn
	var x, y float64
	if 2*rem <= n {
		x, y = math.Cos(math.Pi/2*float64(rem)/float64(n)), math.Sin(math.Pi/2*float64(rem)/float64(n))
	} else {
		// Closer to the next quarter turn: use the complement.
		r := n - rem
		y, x = math.Cos(math.Pi/2*float64(r)/float64(n)), math.Sin(math.Pi/2*float64(r)/float64(n))
	}
	switch q {
	case 0:
		return x, y
	case 1:
		return -y, x
	case 2:
		return -x, -y
	}
	return y, -x
}

// run transforms the columns [v0, v1) of x, n elements of vl values each,
// using work (as long as x) for the passes; the result is left in x.
func (s *stages) run(x, work []complex64, vl, v0, v1 int, inverse bool) {
	src, dst := x, work
	vector := v0 == 0 && v1 == vl && vl%vectorLanes == 0
	for i := range s.list {
		st := &s.list[i]
		if f := simd.passes[st.radix]; vector && f != nil {
			if inverse {
				f(dst[:s.n*vl], src[:s.n*vl], st.itw, st.ic, s.n/st.radix, st.span, vl)
			} else {
				f(dst[:s.n*vl], src[:s.n*vl], st.tw, st.fc, s.n/st.radix, st.span, vl)
			}
			src, dst = dst, src
			continue
		}
		switch st.radix {
		case 2:
			st.pass2(dst, src, s.n, vl, v0, v1, inverse)
		case 4:
			st.pass4(dst, src, s.n, vl, v0, v1, inverse)
		case 3:
			st.pass3(dst, src, s.n, vl, v0, v1, inverse)
		case 5:
			st.pass5(dst, src, s.n, vl, v0, v1, inverse)
		case 7:
			st.pass7(dst, src, s.n, vl, v0, v1, inverse)
		default:
			st.passOdd(dst, src, s.n, vl, v0, v1, inverse)
		}
		src, dst = dst, src
	}
	if len(s.list)%2 == 1 {
		for i := range s.n {
			copy(x[i*vl+v0:i*vl+v1], work[i*vl+v0:i*vl+v1])
		}
	}
}

// twiddles returns the twiddle factors of the direction and the sign that
// turns −i (forward) into +i (inverse) in the butterflies.
func (st *stage) twiddles(inverse bool) ([]complex64, float32) {
	if inverse {
		return st.itw, -1
	}
	return st.tw, 1
}

// pass2 is a radix-2 pass: y0 = a + w·b, y1 = a − w·b.
func (st *stage) pass2(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	m, ns := n/2, st.span
	tw, _ := st.twiddles(inverse)
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*2 + k) * vl
			in0 := src[j*vl+v0 : j*vl+v1]
			in1 := src[(j+m)*vl+v0:][:len(in0)]
			out0 := dst[out+v0:][:len(in0)]
			out1 := dst[out+ns*vl+v0:][:len(in0)]
			w := tw[k]
			if k == 0 {
				for v := range in0 {
					a, c := in0[v], in1[v]
					out0[v], out1[v] = a+c, a-c
				}
				continue
			}
			for v := range in0 {
				a, c := in0[v], mul(in1[v], w)
				out0[v], out1[v] = a+c, a-c
			}
		}
	}
}

// pass4 is a radix-4 pass.
func (st *stage) pass4(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	m, ns := n/4, st.span
	tw, sign := st.twiddles(inverse)
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*4+k)*vl + v0
			s := ns * vl
			in0 := src[j*vl+v0 : j*vl+v1]
			g := len(in0)
			in1, in2, in3 := src[(j+m)*vl+v0:][:g], src[(j+2*m)*vl+v0:][:g], src[(j+3*m)*vl+v0:][:g]
			out0, out1, out2, out3 := dst[out:][:g], dst[out+s:][:g], dst[out+2*s:][:g], dst[out+3*s:][:g]
			w1, w2, w3 := tw[3*k], tw[3*k+1], tw[3*k+2]
			if k == 0 {
				for v := range in0 {
					a0, a1, a2, a3 := in0[v], in1[v], in2[v], in3[v]
					t0, t1, t2, d := a0+a2, a0-a2, a1+a3, a1-a3
					t3 := complex(sign*imag(d), -sign*real(d))
					out0[v], out2[v], out1[v], out3[v] = t0+t2, t0-t2, t1+t3, t1-t3
				}
				continue
			}
			for v := range in0 {
				a0, a1, a2, a3 := in0[v], mul(in1[v], w1), mul(in2[v], w2), mul(in3[v], w3)
				t0, t1, t2, d := a0+a2, a0-a2, a1+a3, a1-a3
				t3 := complex(sign*imag(d), -sign*real(d))
				out0[v], out2[v], out1[v], out3[v] = t0+t2, t0-t2, t1+t3, t1-t3
			}
		}
	}
}

// passOdd is a pass of any odd radix R, by the symmetric form of the
// length-R DFT: with s_p = a_p + a_{R−p} and d_p = a_p − a_{R−p},
// X_k = a_0 + Σ_p s_p·cos(2πkp/R) ∓ i·Σ_p d_p·sin(2πkp/R) and X_{R−k} the
// same with the sign of the sine term flipped.
func (st *stage) passOdd(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	r, ns := st.radix, st.span
	m, h := n/r, (r-1)/2
	tw, sign := st.twiddles(inverse)
	var small [3 * 8]complex64
	buf := small[:]
	if 3*r > len(buf) {
		buf = make([]complex64, 3*r)
	}
	a, sum, dif := buf[:r], buf[r:r+h+1], buf[2*r:2*r+h+1]
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*r + k) * vl
			w := tw[k*(r-1):][:r-1]
			for v := v0; v < v1; v++ {
				a[0] = src[j*vl+v]
				for p := 1; p < r; p++ {
					a[p] = src[(j+p*m)*vl+v]
					if k != 0 {
						a[p] = mul(a[p], w[p-1])
					}
				}
				y0 := a[0]
				for p := 1; p <= h; p++ {
					sum[p], dif[p] = a[p]+a[r-p], a[p]-a[r-p]
					y0 += sum[p]
				}
				dst[out+v] = y0
				for q := 1; q <= h; q++ {
					re, im := a[0], complex64(0)
					for p := 1; p <= h; p++ {
						t := q * p % r
						c, s := st.cos[t], st.sin[t]
						re += complex(c*real(sum[p]), c*imag(sum[p]))
						im += complex(s*real(dif[p]), s*imag(dif[p]))
					}
					// ∓i·im: forward subtracts i·im from X_q.
					rot := complex(sign*imag(im), -sign*real(im))
					dst[out+q*ns*vl+v] = re + rot
					dst[out+(r-q)*ns*vl+v] = re - rot
				}
			}
		}
	}
}

// mul is the complex product in float32 arithmetic. Go's complex64 `*`
// converts both operands to float64 and back, six conversions per
// product, which doubles the cost of a pass.
func mul(a, b complex64) complex64 {
	ar, ai, br, bi := real(a), imag(a), real(b), imag(b)
	return complex(ar*br-ai*bi, ar*bi+ai*br)
}

// MulInto sets dst[i] = a[i]·b[i] (len(dst) = len(a) = len(b)): the
// pointwise product of two spectra.
func MulInto(dst, a, b []complex64) {
	a, b = a[:len(dst)], b[:len(dst)]
	done := 0
	if simd.mul != nil {
		simd.mul(dst, a, b)
		done = len(dst) / vectorLanes * vectorLanes
	}
	for i := done; i < len(dst); i++ {
		dst[i] = mul(a[i], b[i])
	}
}

// scale multiplies z by the real c.
func scale(c float32, z complex64) complex64 { return complex(c*real(z), c*imag(z)) }

// rotate multiplies z by −i·sign: by −i in the forward transform, +i in
// the inverse.
func rotate(sign float32, z complex64) complex64 { return complex(sign*imag(z), -sign*real(z)) }

// pass3 is passOdd for radix 3, written out.
func (st *stage) pass3(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	m, ns := n/3, st.span
	tw, sign := st.twiddles(inverse)
	c1, s1 := st.cos[1], st.sin[1]
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*3+k)*vl + v0
			s := ns * vl
			in0 := src[j*vl+v0 : j*vl+v1]
			g := len(in0)
			in1, in2 := src[(j+m)*vl+v0:][:g], src[(j+2*m)*vl+v0:][:g]
			out0, out1, out2 := dst[out:][:g], dst[out+s:][:g], dst[out+2*s:][:g]
			w1, w2 := tw[2*k], tw[2*k+1]
			for v := range in0 {
				a0, a1, a2 := in0[v], in1[v], in2[v]
				if k != 0 {
					a1, a2 = mul(a1, w1), mul(a2, w2)
				}
				sum, dif := a1+a2, a1-a2
				re, rot := a0+scale(c1, sum), rotate(sign, scale(s1, dif))
				out0[v], out1[v], out2[v] = a0+sum, re+rot, re-rot
			}
		}
	}
}

// pass5 is passOdd for radix 5, written out.
func (st *stage) pass5(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	m, ns := n/5, st.span
	tw, sign := st.twiddles(inverse)
	c1, c2, s1, s2 := st.cos[1], st.cos[2], st.sin[1], st.sin[2]
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*5+k)*vl + v0
			s := ns * vl
			in0 := src[j*vl+v0 : j*vl+v1]
			g := len(in0)
			in1, in2, in3, in4 := src[(j+m)*vl+v0:][:g], src[(j+2*m)*vl+v0:][:g], src[(j+3*m)*vl+v0:][:g], src[(j+4*m)*vl+v0:][:g]
			out0, out1, out2, out3, out4 := dst[out:][:g], dst[out+s:][:g], dst[out+2*s:][:g], dst[out+3*s:][:g], dst[out+4*s:][:g]
			w := tw[4*k:][:4]
			for v := range in0 {
				a0, a1, a2, a3, a4 := in0[v], in1[v], in2[v], in3[v], in4[v]
				if k != 0 {
					a1, a2, a3, a4 = mul(a1, w[0]), mul(a2, w[1]), mul(a3, w[2]), mul(a4, w[3])
				}
				sum1, sum2, dif1, dif2 := a1+a4, a2+a3, a1-a4, a2-a3
				re1 := a0 + scale(c1, sum1) + scale(c2, sum2)
				re2 := a0 + scale(c2, sum1) + scale(c1, sum2)
				rot1 := rotate(sign, scale(s1, dif1)+scale(s2, dif2))
				rot2 := rotate(sign, scale(s2, dif1)-scale(s1, dif2))
				out0[v] = a0 + sum1 + sum2
				out1[v], out4[v] = re1+rot1, re1-rot1
				out2[v], out3[v] = re2+rot2, re2-rot2
			}
		}
	}
}

// pass7 is passOdd for radix 7, written out.
func (st *stage) pass7(dst, src []complex64, n, vl, v0, v1 int, inverse bool) {
	m, ns := n/7, st.span
	tw, sign := st.twiddles(inverse)
	c1, c2, c3 := st.cos[1], st.cos[2], st.cos[3]
	s1, s2, s3 := st.sin[1], st.sin[2], st.sin[3]
	for b := range m / ns {
		for k := range ns {
			j := b*ns + k
			out := (b*ns*7+k)*vl + v0
			s := ns * vl
			in0 := src[j*vl+v0 : j*vl+v1]
			g := len(in0)
			in1, in2, in3 := src[(j+m)*vl+v0:][:g], src[(j+2*m)*vl+v0:][:g], src[(j+3*m)*vl+v0:][:g]
			in4, in5, in6 := src[(j+4*m)*vl+v0:][:g], src[(j+5*m)*vl+v0:][:g], src[(j+6*m)*vl+v0:][:g]
			out0, out1, out2, out3 := dst[out:][:g], dst[out+s:][:g], dst[out+2*s:][:g], dst[out+3*s:][:g]
			out4, out5, out6 := dst[out+4*s:][:g], dst[out+5*s:][:g], dst[out+6*s:][:g]
			w := tw[6*k:][:6]
			for v := range in0 {
				a0, a1, a2, a3, a4, a5, a6 := in0[v], in1[v], in2[v], in3[v], in4[v], in5[v], in6[v]
				if k != 0 {
					a1, a2, a3 = mul(a1, w[0]), mul(a2, w[1]), mul(a3, w[2])
					a4, a5, a6 = mul(a4, w[3]), mul(a5, w[4]), mul(a6, w[5])
				}
				sum1, sum2, sum3 := a1+a6, a2+a5, a3+a4
				dif1, dif2, dif3 := a1-a6, a2-a5, a3-a4
				out0[v] = a0 + sum1 + sum2 + sum3
				re := a0 + scale(c1, sum1) + scale(c2, sum2) + scale(c3, sum3)
				rot := rotate(sign, scale(s1, dif1)+scale(s2, dif2)+scale(s3, dif3))
				out1[v], out6[v] = re+rot, re-rot
				re = a0 + scale(c2, sum1) + scale(c3, sum2) + scale(c1, sum3)
				rot = rotate(sign, scale(s2, dif1)-scale(s3, dif2)-scale(s1, dif3))
				out2[v], out5[v] = re+rot, re-rot
				re = a0 + scale(c3, sum1) + scale(c1, sum2) + scale(c2, sum3)
				rot = rotate(sign, scale(s3, dif1)-scale(s1, dif2)+scale(s2, dif3))
				out3[v], out4[v] = re+rot, re-rot
			}
		}
	}
}

// Roots returns the n-th roots of unity e^(−2πi·m/n), m = 0 … n−1, each
// computed in float64 and rounded once: the twiddle table of the GPU
// transforms (kernels/fft.cl), as accurate as this package's own.
func Roots(n int) []complex64 {
	out := make([]complex64, n)
	for m := range out {
		c, s := unitRoot(m, n)
		out[m] = complex(float32(c), float32(-s))
	}
	return out
}
