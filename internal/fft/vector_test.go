package fft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// guard fills the values past a slice's end, which no pass may touch.
const guard = complex64(complex(-7.25, 3.5))

// TestVectorPasses compares every SIMD pass with the pure-Go pass of its
// radix, forward and inverse, over every stage position of several
// lengths and vector widths: equal within a few roundings of each
// butterfly, and no value written past dst's end.
func TestVectorPasses(t *testing.T) {
	if len(simdSets) == 0 {
		t.Skip("no SIMD passes in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, set := range simdSets {
		for radix, f := range set.passes {
			for _, n := range []int{radix, radix * radix, radix * 4 * 3, radix * radix * radix * 2} {
				s := newStages(n)
				// A stage of this radix at every span that occurs.
				for i := range s.list {
					st := &s.list[i]
					if st.radix != radix {
						continue
					}
					for _, vl := range []int{8, 16, 40} {
						for _, inverse := range []bool{false, true} {
							name := fmt.Sprintf("%s/radix%d/n%d/span%d/vl%d/inverse=%v", set.name, radix, n, st.span, vl, inverse)
							src, _ := randomComplex(rng, n*vl)
							want := make([]complex64, n*vl)
							got := make([]complex64, n*vl+vl)
							for j := range got {
								got[j] = guard
							}
							tw, c := st.tw, st.fc
							if inverse {
								tw, c = st.itw, st.ic
							}
							f(got[:n*vl], src, tw, c, n/radix, st.span, vl)
							switch radix {
							case 2:
								st.pass2(want, src, n, vl, 0, vl, inverse)
							case 3:
								st.pass3(want, src, n, vl, 0, vl, inverse)
							case 4:
								st.pass4(want, src, n, vl, 0, vl, inverse)
							case 5:
								st.pass5(want, src, n, vl, 0, vl, inverse)
							}
							for j, w := range want {
								if d := cmplxAbs(got[j] - w); d > 8*eps*float64(radix) || math.IsNaN(d) {
									t.Fatalf("%s: value %d is %v, the Go pass gives %v", name, j, got[j], w)
								}
							}
							for j := n * vl; j < len(got); j++ {
								if got[j] != guard {
									t.Fatalf("%s: value %d past the end was overwritten", name, j)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestMulInto checks the SIMD spectrum product (whole runs of eight
// values, the rest in Go) against the scalar product for every length up
// to 40, with guard values past the end.
func TestMulInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	saved := simd
	defer func() { simd = saved }()
	sets := append(simdSets, simdSet{name: "Go"})
	for _, set := range sets {
		simd.mul = set.mul
		for n := range 41 {
			a, _ := randomComplex(rng, n)
			b, _ := randomComplex(rng, n)
			dst := make([]complex64, n+9)
			for j := range dst {
				dst[j] = guard
			}
			MulInto(dst[:n], a, b)
			for j := range n {
				if d := cmplxAbs(dst[j] - mul(a[j], b[j])); d > 4*eps {
					t.Fatalf("%s n=%d: product %d is %v, want %v", set.name, n, j, dst[j], mul(a[j], b[j]))
				}
			}
			for j := n; j < len(dst); j++ {
				if dst[j] != guard {
					t.Fatalf("%s n=%d: value %d past the end was overwritten", set.name, n, j)
				}
			}
		}
	}
}

func cmplxAbs(z complex64) float64 { return math.Hypot(float64(real(z)), float64(imag(z))) }

// TestVectorReal compares each instruction set's real pre- and
// post-processing loops and transposes with the Go loops, with guard
// values past the end of what they write.
func TestVectorReal(t *testing.T) {
	if len(simdSets) == 0 {
		t.Skip("no SIMD loops in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, set := range simdSets {
		for _, n := range []int{2, 4, 6, 16, 30, 64} {
			r := newRealRows(n)
			h := r.h
			for _, gs := range []int{8, 16, 24} {
				name := fmt.Sprintf("%s/n%d/gs%d", set.name, n, gs)
				z, _ := randomComplex(rng, (h+1)*gs)
				want := make([]complex64, (h+1)*gs)
				got := guarded((h+1)*gs, gs)
				realPostGo(want, z, r.w, h, gs, 1, h)
				set.post(got, z, r.w, realConstants, h, gs)
				compare(t, name+"/post", got[gs:h*gs], want[gs:h*gs], 6*eps)
				checkGuards(t, name+"/post", got[:gs], 0)
				checkGuards(t, name+"/post", got, h*gs)
				want, got = make([]complex64, h*gs), guarded(h*gs, gs)
				realPreGo(want, z, r.iw, h, gs)
				set.pre(got, z, r.iw, realConstants, h, gs)
				compare(t, name+"/pre", got[:h*gs], want, 12*eps)
				checkGuards(t, name+"/pre", got, h*gs)
			}
		}
		if set.transpose == nil {
			continue
		}
		for _, rows := range []int{0, 3, 8, 16, 21} {
			for _, cols := range []int{0, 5, 8, 24, 29} {
				ss, ds := cols+3, rows+5
				src, _ := randomComplex(rng, rows*ss)
				got := guarded(cols*ds, 0)
				saved := simd
				simd.transpose = set.transpose
				transpose(got, ds, src, ss, rows, cols)
				simd = saved
				for r := range rows {
					for c := range cols {
						if got[c*ds+r] != src[r*ss+c] {
							t.Fatalf("%s transpose %d×%d: [%d][%d] is %v, want %v", set.name, rows, cols, c, r, got[c*ds+r], src[r*ss+c])
						}
					}
				}
				for c := range cols {
					checkGuards(t, fmt.Sprintf("%s transpose %d×%d", set.name, rows, cols), got[c*ds+rows:(c+1)*ds], 0)
				}
			}
		}
	}
}

// guarded returns n values and extra guard values after them, all guard.
func guarded(n, extra int) []complex64 {
	x := make([]complex64, n+extra)
	for i := range x {
		x[i] = guard
	}
	return x
}

func checkGuards(t *testing.T, name string, x []complex64, from int) {
	t.Helper()
	for j := from; j < len(x); j++ {
		if x[j] != guard {
			t.Fatalf("%s: value %d, past what it may write, was overwritten", name, j)
		}
	}
}

func compare(t *testing.T, name string, got, want []complex64, tol float64) {
	t.Helper()
	for j, w := range want {
		if d := cmplxAbs(got[j] - w); !(d <= tol) {
			t.Fatalf("%s: value %d is %v, the Go loop gives %v", name, j, got[j], w)
		}
	}
}

// TestRealNDEachSIMD runs TestRealND and TestRealAgainstGonum with each
// instruction set's loops in turn (the default runs the widest only).
func TestRealNDEachSIMD(t *testing.T) {
	saved := simd
	defer func() { simd = saved }()
	for _, set := range simdSets[min(1, len(simdSets)):] {
		simd = set
		t.Run(set.name, func(t *testing.T) {
			TestRealND(t)
			TestRealAgainstGonum(t)
		})
	}
}

// TestSIMDSetsSameBits: every instruction set does the same operations on
// each lane, so AVX2 and AVX-512 transforms agree bit for bit (the Go
// twins round differently).
func TestSIMDSetsSameBits(t *testing.T) {
	if len(simdSets) < 2 {
		t.Skip("fewer than two instruction sets on this CPU")
	}
	saved := simd
	defer func() { simd = saved }()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, shape := range [][]int{{720, 288}, {45, 14}, {12800}} {
		var first []complex64
		var firstBack []float32
		src := make([]float32, product(shape)*3)
		for i := range src {
			src[i] = float32(rng.Float64()*2 - 1)
		}
		for _, set := range simdSets {
			simd = set
			plan := NewRealND(3, shape, 2)
			spec := make([]complex64, plan.SpectrumLen())
			plan.Forward(spec, src)
			back := make([]float32, plan.Len())
			plan.Inverse(back, slices.Clone(spec))
			if first == nil {
				first, firstBack = spec, back
				continue
			}
			for i, v := range back {
				if math.Float32bits(v) != math.Float32bits(firstBack[i]) {
					t.Fatalf("%v inverse: %s value %d is %v, %s gave %v", shape, set.name, i, v, simdSets[0].name, firstBack[i])
				}
			}
			for i := range spec {
				if math.Float32bits(real(spec[i])) != math.Float32bits(real(first[i])) || math.Float32bits(imag(spec[i])) != math.Float32bits(imag(first[i])) {
					t.Fatalf("%v: %s value %d is %v, %s gave %v", shape, set.name, i, spec[i], simdSets[0].name, first[i])
				}
			}
		}
	}
}

func product(shape []int) int {
	p := 1
	for _, n := range shape {
		p *= n
	}
	return p
}
