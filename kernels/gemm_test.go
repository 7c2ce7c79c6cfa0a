package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// mmaTF32 is mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32 over a warp's
// registers, as the PTX ISA lays out its fragments (lane = 4g + t): A's
// a0 (row g, column t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); B's b0
// (row t, column g), b1 (t+4, g); D's d0 (g, 2t), d1 (g, 2t+1), d2 (g+8,
// 2t), d3 (g+8, 2t+1). Each D element takes its 8 products (exact: TF32
// times TF32 fits a float64) and its old value summed in float64 and
// rounded once to float32: a model of the tensor cores that ignores how
// they round inside (the device tests measure that).
func mmaTF32(d *[32][4]float32, a *[32][4]float32, b *[32][2]float32) {
	mmaModel(d, 8,
		func(row, k int) float32 { return a[(row%8)*4+k%4][row/8+2*(k/4)] },
		func(k, col int) float32 { return b[col*4+k%4][k/4] })
}

// mmaF16 is mma.sync.m16n8k16.row.col.f32.f16.f16.f32 as mmaTF32 models
// m16n8k8, the fragments' FP16 pairs as the PTX ISA lays them out (the
// lower k in the low half): A's registers (row g, k 2t..2t+1), (g+8,
// 2t..), (g, 2t+8..), (g+8, 2t+8..), held here as 8 values a[lane][2r+h];
// B's (k 2t..2t+1, column g), (2t+8.., g) as b[lane][2r+h].
func mmaF16(d *[32][4]float32, a *[32][8]float32, b *[32][4]float32) {
	mmaModel(d, 16,
		func(row, k int) float32 { return a[(row%8)*4+(k%8)/2][2*(row/8+2*(k/8))+k%2] },
		func(k, col int) float32 { return b[col*4+(k%8)/2][2*(k/8)+k%2] })
}

// mmaModel is D = A·B + D for one m16n8kK tile in a warp's fragments:
// element (row, k) of A and (k, col) of B as A and B give them, d's lanes
// holding D as mmaTF32 says; each element's K products and old value
// summed in float64, rounded once to float32.
func mmaModel(d *[32][4]float32, kk int, A func(row, k int) float32, B func(k, col int) float32) {
	var res [32][4]float32
	for lane := range 32 {
		g, t := lane/4, lane%4
		for q := range 4 {
			row, col := g+8*(q/2), 2*t+q%2
			s := float64(d[lane][q])
			for k := range kk {
				s += float64(A(row, k)) * float64(B(k, col))
			}
			res[lane][q] = float32(s)
		}
	}
	*d = res
}

// f16Value decodes an FP16 encoding (finite).
func f16Value(h uint16) float32 {
	e, f := int(h>>10&0x1f), float64(h&0x3ff)
	v := math.Ldexp(f, -24)
	if e > 0 {
		v = math.Ldexp(1024+f, e-25)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return float32(v)
}

// emulateGemm runs a gemm Launch on the CPU warp by warp and lane by lane,
// as gemm.cl does: the same staging, the same fragment loads from the
// staged tile, the weights read from l.Taps at the kernel's indices, the
// same order of mma; mmaTF32 stands in for the tensor cores. It returns
// the accumulators in the output's layout.
func emulateGemm(t *testing.T, l *Launch, p *nd.Problem, in []float64) []float32 {
	def := map[string]int{}
	for _, d := range l.Defines {
		name, value, _ := strings.Cut(d, "=")
		if n, err := strconv.Atoi(value); err == nil {
			def[name] = n
		}
	}
	bank, ky, sy, sx, c := def["BANK"], def["KY"], def["SHIFT_Y"], def["SHIFT_X"], def["C"]
	kch, mx, ry, ntw, wn, wyN := def["KCH"], def["MX"], def["RY"], def["NTW"], def["WARPS_N"], def["WARPS_Y"]
	groups, split, held, f16 := def["BANK_GROUPS"], def["IN_SPLIT"] == 1, def["B_HELD"] == 1, def["F16"] == 1
	nOuter, outerTaps := def["NOUTER"], def["OUTER_TAPS"]
	nt := wn * ntw
	ntAll := nt * groups
	tileX, tileY := 16*mx, ry*wyN
	rowElems := tileX + (8*kch-1)*c
	tileRows := tileY + ky - 1
	kRows, scaleAt := ky, 0
	if f16 {
		kRows = (ky + 1) / 2
		scaleAt = outerTaps * kRows * kch * ntAll * 32 * 4
	}
	if l.Local != [3]int{32 * wn * wyN, 1, 1} || ntAll*8 < bank || len(l.Taps) != outerTaps*kRows*kch*ntAll*32*4+b2i(f16)*ntAll*8 || 4*def["SCALE_AT"] != scaleAt {
		t.Fatalf("gemm launch: local %v, defines %v, %d weights", l.Local, l.Defines, len(l.Taps))
	}
	inY, inX, outY, outX, planes := int(l.Scalars[0]), int(l.Scalars[1]), int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4])
	inRow, outRow := inX*c, outX*c
	inPlane, outPlane := inY*inRow, outY*outRow
	xTiles := (outRow + tileX - 1) / tileX
	if l.Groups[0] != xTiles*groups || l.Groups[1]*tileY < outY || l.Groups[2] > planes {
		t.Fatalf("groups %v do not cover %d planes of %d×%d", l.Groups, planes, outY, outRow)
	}
	out := make([]float32, planes*outPlane*bank)
	constant := p.Border == nd.Constant
	mapped := func(q, n int) (int, bool) {
		if constant {
			return q, q >= 0 && q < n
		}
		m, _ := p.Border.Index(q, n)
		return m, true
	}
	load := func(src, py, pe int) float32 {
		px := int(math.Floor(float64(pe) / float64(c)))
		ch := pe - px*c
		y, okY := mapped(py, inY)
		x, okX := mapped(px, inX)
		if src < 0 || !okY || !okX {
			return float32(l.CVal)
		}
		return float32(in[src*inPlane+y*inRow+x*c+ch])
	}
	// The F16 path's pairs reach C elements past a row.
	rowElems += b2i(f16) * c
	tile := make([]float32, tileRows*rowElems)
	for plane := range planes {
		for by := range l.Groups[1] {
			for bx := range l.Groups[0] {
				group := bx / xTiles
				e0, y0 := (bx%xTiles)*tileX, by*tileY
				for wy := range wyN {
					for w := range wn {
						nt0 := group*nt + w*ntw
						acc := make([][32][4]float32, ry*mx*ntw)
						accAt := func(r, m, n int) *[32][4]float32 { return &acc[(r*mx+m)*ntw+n] }
						for ot := range outerTaps {
							src, rest, tt, stride := 0, plane, ot, 1
							for d := nOuter - 1; d >= 0; d-- {
								nIn, nOut, k, shift := int(l.Outer[4*d]), int(l.Outer[4*d+1]), int(l.Outer[4*d+2]), int(l.Outer[4*d+3])
								q := rest%nOut + tt%k - shift
								rest, tt = rest/nOut, tt/k
								if src >= 0 {
									if m, ok := mapped(q, nIn); ok {
										src += m * stride
									} else {
										src = -1
									}
								}
								stride *= nIn
							}
							for r := range tileRows {
								for q := range rowElems {
									tile[r*rowElems+q] = load(src, y0+r-sy, e0+q-sx*c)
								}
							}
							bFrag := func(jy, ch, n int) (hi, lo [32][2]float32) {
								for lane := range 32 {
									v := l.Taps[((((ot*ky+jy)*kch+ch)*ntAll+nt0+n)*32+lane)*4:]
									hi[lane] = [2]float32{float32(v[0]), float32(v[1])}
									lo[lane] = [2]float32{float32(v[2]), float32(v[3])}
								}
								return hi, lo
							}
							aFrag := func(row, m, ch int) (hi, lo [32][4]float32) {
								for lane := range 32 {
									g, tt := lane/4, lane%4
									s := tile[row*rowElems+m*16+g+(8*ch+tt)*c:]
									for q, off := range []int{0, 8, 4 * c, 8 + 4*c} {
										v := s[off]
										if split {
											hi[lane][q], lo[lane][q] = SplitTF32(v)
										} else {
											hi[lane][q] = v
											if RoundTF32(v) != v {
												t.Fatalf("input %v is not exact in TF32 but IN_SPLIT=0", v)
											}
										}
									}
								}
								return hi, lo
							}
							products := func(d *[32][4]float32, ah, al *[32][4]float32, bh, bl *[32][2]float32) {
								if split {
									mmaTF32(d, al, bh)
									mmaTF32(d, ah, bl)
									mmaTF32(d, ah, bh)
								} else {
									mmaTF32(d, ah, bl)
									mmaTF32(d, ah, bh)
								}
							}
							row0 := wy * ry
							if f16 {
								for _, v := range tile {
									if RoundF16(v) != v {
										t.Fatalf("staged value %v is not exact in FP16 but F16=1", v)
									}
								}
								// The pairs of one kernel row: registers (g, 2t..), (g+8, 2t..).
								half := func(row, m, ch int) (h [32][4]float32) {
									if row >= tileRows || row >= row0+ry+ky-1 {
										return h // the padding row
									}
									for lane := range 32 {
										g, tt := lane/4, lane%4
										s := tile[row*rowElems+m*16+g+(8*ch+2*tt)*c:]
										h[lane] = [4]float32{s[0], s[c], s[8], s[8+c]}
									}
									return h
								}
								for pr := range kRows {
									for ch := range kch {
										var bh, bl [32][4]float32
										for n := range ntw {
											for lane := range 32 {
												v := l.Taps[((((ot*kRows+pr)*kch+ch)*ntAll+nt0+n)*32+lane)*4:]
												for h := range 4 {
													bits := math.Float32bits(float32(v[h]))
													lo, hi := f16Value(uint16(bits)), f16Value(uint16(bits>>16))
													if h < 2 {
														bh[lane][2*h], bh[lane][2*h+1] = lo, hi
													} else {
														bl[lane][2*(h-2)], bl[lane][2*(h-2)+1] = lo, hi
													}
												}
											}
											for r := range ry {
												for m := range mx {
													h0, h1 := half(row0+r+2*pr, m, ch), half(row0+r+2*pr+1, m, ch)
													var a [32][8]float32
													for lane := range 32 {
														a[lane] = [8]float32{h0[lane][0], h0[lane][1], h0[lane][2], h0[lane][3], h1[lane][0], h1[lane][1], h1[lane][2], h1[lane][3]}
													}
													mmaF16(accAt(r, m, n), &a, &bl)
													mmaF16(accAt(r, m, n), &a, &bh)
												}
											}
										}
									}
								}
							} else if held {
								for i := range ry + ky - 1 {
									for ch := range kch {
										for m := range mx {
											ah, al := aFrag(row0+i, m, ch)
											for r := range ry {
												jy := i - r
												if jy < 0 || jy >= ky {
													continue
												}
												for n := range ntw {
													bh, bl := bFrag(jy, ch, n)
													products(accAt(r, m, n), &ah, &al, &bh, &bl)
												}
											}
										}
									}
								}
							} else {
								for jy := range ky {
									for ch := range kch {
										for r := range ry {
											for m := range mx {
												ah, al := aFrag(row0+r+jy, m, ch)
												for n := range ntw {
													bh, bl := bFrag(jy, ch, n)
													products(accAt(r, m, n), &ah, &al, &bh, &bl)
												}
											}
										}
									}
								}
							}
						}
						for r := range ry {
							y := y0 + wy*ry + r
							if y >= outY {
								continue
							}
							for m := range mx {
								for lane := range 32 {
									g, tt := lane/4, lane%4
									for q := range 4 {
										e := e0 + 16*m + g + 8*(q/2)
										for n := range ntw {
											k := 8*(nt0+n) + 2*tt + q%2
											if e < outRow && k < bank {
												v := accAt(r, m, n)[lane][q]
												if f16 {
													v *= float32(l.Taps[scaleAt+k])
												}
												out[(plane*outPlane+y*outRow+e)*bank+k] = v
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestSplitTF32 checks the split the weights (on the host) and the
// inputs (gemm.cl's tf32) take: both parts are TF32 values, and hi + lo is
// within 2⁻²² of x, relatively (or half a subnormal TF32 spacing, 2⁻¹³⁷).
func TestSplitTF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := cases(2000)
	for i := range n {
		x := math.Float32frombits(rng.Uint32())
		if i%4 == 0 {
			x = float32(rng.NormFloat64())
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || math.Abs(float64(x)) > 0x1p127 {
			continue
		}
		hi, lo := SplitTF32(x)
		for _, v := range []float32{hi, lo} {
			if math.Float32bits(v)&(1<<13-1) != 0 {
				t.Fatalf("split of %v: %v is not a TF32 value", x, v)
			}
		}
		if err := math.Abs(float64(x) - float64(hi) - float64(lo)); err > 0x1p-22*math.Abs(float64(x))+0x1p-137 {
			t.Fatalf("split of %v = %v + %v: error %g", x, hi, lo, err)
		}
	}
	// Rounding ties away from zero, as cvt.rna does.
	if got := RoundTF32(1 + 0x1p-11); got != 1+0x1p-10 {
		t.Errorf("RoundTF32(1 + 2⁻¹¹) = %v, want 1 + 2⁻¹⁰", got)
	}
	if got := RoundTF32(-(1 + 0x1p-11)); got != -(1 + 0x1p-10) {
		t.Errorf("RoundTF32(−(1 + 2⁻¹¹)) = %v", got)
	}
	t.Logf("%d random values", n)
}

// cases is n, or NDCONV_PROPERTY_CASES where set (more cases on demand).
func cases(n int) int {
	if v, err := strconv.Atoi(os.Getenv("NDCONV_PROPERTY_CASES")); err == nil && v > 0 {
		return v
	}
	return n
}

// gemmCase is a random problem the gemm method takes.
func gemmCase(rng *rand.Rand, i int) enginetest.Case {
	dts := []nd.DType{nd.Uint8, nd.Float32, nd.Int16, nd.Uint16, nd.Int8}
	in := dts[rng.IntN(len(dts))]
	outs := []nd.DType{nd.Float32, in, nd.Uint8, nd.Int16}
	out := outs[rng.IntN(len(outs))]
	var shape, kshape []int
	switch rng.IntN(4) {
	case 0: // 3-D
		shape = []int{3 + rng.IntN(6), 3 + rng.IntN(10), 3 + rng.IntN(30)}
		kshape = []int{1 + rng.IntN(4), 1 + rng.IntN(5), 1 + rng.IntN(9)}
	case 1: // 2-D with channels
		shape = []int{2 + rng.IntN(20), 2 + rng.IntN(40), 1 + rng.IntN(3)}
		kshape = []int{1 + rng.IntN(6), 1 + rng.IntN(12)}
	default: // 2-D
		shape = []int{2 + rng.IntN(24), 2 + rng.IntN(50)}
		kshape = []int{1 + rng.IntN(8), 1 + rng.IntN(18)}
	}
	bank := 1 + rng.IntN(12)
	if rng.IntN(4) == 0 {
		bank = 17 + rng.IntN(24)
	}
	ks := make([]nd.Kernel, bank)
	for b := range ks {
		ks[b] = enginetest.RandomKernel(rng, rng.IntN(3) == 0, kshape...)
	}
	modes := []nd.Mode{nd.Same, nd.Valid, nd.Full}
	mode := modes[rng.IntN(3)]
	for d := range kshape {
		if mode == nd.Valid && shape[d] < kshape[d] {
			mode = nd.Same
		}
	}
	origin := make([]int, len(kshape))
	for d, k := range kshape {
		origin[d] = rng.IntN(k) - k/2
	}
	spec := nd.Spec{Shape: shape, In: in, Out: out, Border: nd.Border(rng.IntN(5)), CVal: float64(rng.IntN(7) - 3), Mode: mode, Origin: origin, Kernels: ks, Convolve: rng.IntN(2) == 0}
	return enginetest.Case{Name: fmt.Sprintf("gemm-%d", i), Spec: spec, Input: enginetest.RandomArray(rng, in, shape...)}
}

// TestGemmModel emulates random problems of every border, mode, origin,
// channel layout and dtype through NewGemm's launches (lane by lane, the
// kernel's fragment layout and weight order) and checks them against the
// float64 reference within GemmErrorBound — the host's half of the gemm
// method, without a GPU (the device tests run gemm.cl itself).
func TestGemmModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	n := cases(40)
	worst := 0.0
	for i := range n {
		c := gemmCase(rng, i)
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		opt := GemmOptions{}
		if i%3 == 1 { // other decompositions: several m-tiles, the weights per row
			opt.Shape = GemmShape{MX: 2, RY: 3, NTW: 1, WarpsN: 1, WarpsY: 2}
		}
		l, err := NewGemm(p, opt)
		if err != nil || l == nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		got := outputArray(p, emulateGemm(t, l, p, c.Input.Float64s()))
		want := c.Want()
		bound := GemmErrorBound(p, p.WeightAbsSum(), c.MaxAbs())
		if msg := c.CheckBound(got, want, bound); msg != "" {
			t.Fatalf("%s (%v %v→%v %v, kernel %v, bank %d, %v): %s", c.Name, c.Spec.Border, c.Spec.In, p.Out, c.Spec.Mode, p.KShape, len(p.Kernels), l.Describe(), msg)
		}
		if p.Out == nd.Float32 && bound > 0 {
			for j, v := range got.Float64s() {
				worst = max(worst, math.Abs(v-want.Values[j])/bound)
			}
		}
	}
	t.Logf("%d random problems; largest error %.3g of the bound (float32 outputs)", n, worst)
}

// TestGemmModel8Bit emulates random problems of 8-bit data, the FP16
// path's, through NewGemm's launches against the float64 reference within
// GemmErrorBound: kernels scaled by powers of two from 2⁻⁶⁰ to 2⁶⁰ (each
// its own scale), cvals FP16 holds and ones it does not (0.1, 1e6: the
// TF32 path, 0.1 split as TF32 does not hold it either), and a quarter
// with TF32 asked for; both paths must be taken.
func TestGemmModel8Bit(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 8))
	n := cases(40)
	paths := map[bool]int{}
	for i := range n {
		c := gemmCase(rng, i)
		c.Spec.In = []nd.DType{nd.Uint8, nd.Int8}[rng.IntN(2)]
		c.Input = enginetest.RandomArray(rng, c.Spec.In, c.Spec.Shape...)
		c.Spec.Border = []nd.Border{nd.Constant, nd.Constant, nd.Reflect, nd.Wrap}[rng.IntN(4)]
		c.Spec.CVal = []float64{-3, 2.5, 0.1, 1e6, 255}[rng.IntN(5)]
		for b := range c.Spec.Kernels {
			w := slices.Clone(c.Spec.Kernels[b].Weights)
			e := rng.IntN(121) - 60
			for j := range w {
				w[j] = math.Ldexp(w[j], e)
			}
			c.Spec.Kernels[b].Weights = w
		}
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		opt := GemmOptions{}
		opt.Shape.TF32 = i%4 == 3
		if i%3 == 1 {
			opt.Shape.MX, opt.Shape.RY, opt.Shape.WarpsY = 2, 3, 2
		}
		l, err := NewGemm(p, opt)
		if err != nil || l == nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		f16 := l.Shape.(GemmShape).FP16
		paths[f16]++
		got := outputArray(p, emulateGemm(t, l, p, c.Input.Float64s()))
		bound := GemmErrorBound(p, p.WeightAbsSum(), c.MaxAbs())
		if msg := c.CheckBound(got, c.Want(), bound); msg != "" {
			t.Fatalf("%s (%v %v→%v %v cval %v, kernel %v, bank %d, %v): %s", c.Name, c.Spec.Border, c.Spec.In, p.Out, c.Spec.Mode, c.Spec.CVal, p.KShape, len(p.Kernels), l.Describe(), msg)
		}
	}
	t.Logf("%d random problems: %d by FP16, %d by TF32", n, paths[true], paths[false])
	if paths[true] == 0 || paths[false] == 0 {
		t.Errorf("paths taken: %v", paths)
	}
}

// TestGemmCValSplit: 8-bit data under a constant border whose cval TF32
// does not hold (0.1) stage that cval, so the TF32 path must split its
// values (IN_SPLIT=1) and the FP16 path must not run; a cval both hold
// keeps them whole (FP16); 2²⁰ (beyond FP16, exact in TF32) takes TF32
// unsplit.
func TestGemmCValSplit(t *testing.T) {
	k := []nd.Kernel{{Shape: []int{3, 3}, Weights: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}}}
	for _, c := range []struct {
		cval  float64
		f16   bool
		split bool
	}{{0.1, false, true}, {1.5, true, false}, {1e6, false, true}, {1 << 20, false, false}} {
		p, _ := (&nd.Spec{Shape: []int{8, 8}, In: nd.Uint8, Out: nd.Float32, Border: nd.Constant, CVal: c.cval, Kernels: k}).Normalize()
		l, err := NewGemm(p, GemmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		split := slices.Contains(l.Defines, "IN_SPLIT=1")
		if f16 := l.Shape.(GemmShape).FP16; f16 != c.f16 || split != c.split {
			t.Errorf("cval %v: FP16 %v, IN_SPLIT %v; want %v, %v", c.cval, f16, split, c.f16, c.split)
		}
	}
}

// TestGemmF16Forms: the FP16 path runs only double-buffered with the
// weights held (the forms run and measured on the device); 8-bit data
// whose decomposition would be otherwise — a 31×31 kernel's 16 row pairs
// by 4 chunks do not fit the registers — takes TF32, and S000's 7³ bank
// of 32 and an RGBA bank take FP16.
func TestGemmF16Forms(t *testing.T) {
	ones := func(bank int, shape ...int) []nd.Kernel {
		size := 1
		for _, s := range shape {
			size *= s
		}
		ks := make([]nd.Kernel, bank)
		for i := range ks {
			w := make([]float64, size)
			for j := range w {
				w[j] = float64(j%7 - 3)
			}
			ks[i] = nd.Kernel{Shape: shape, Weights: w}
		}
		return ks
	}
	for _, c := range []struct {
		spec nd.Spec
		f16  bool
	}{
		{nd.Spec{Shape: []int{64, 64, 64}, In: nd.Uint8, Out: nd.Float32, Kernels: ones(32, 7, 7, 7), Mode: nd.Valid}, true},
		{nd.Spec{Shape: []int{64, 64, 4}, In: nd.Uint8, Out: nd.Float32, Kernels: ones(8, 5, 5)}, true},
		{nd.Spec{Shape: []int{256, 256}, In: nd.Uint8, Out: nd.Float32, Kernels: ones(16, 31, 31)}, false},
	} {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewGemm(p, GemmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f16 := l.Shape.(GemmShape).FP16
		if f16 != c.f16 || f16 && !(slices.Contains(l.Defines, "STAGES=2") && slices.Contains(l.Defines, "B_HELD=1")) {
			t.Errorf("%v %v: FP16 %v (want %v), %v", c.spec.Shape, p.KShape, f16, c.f16, l.Defines)
		}
	}
}

// TestGemmRefuses: the problems the gemm method does not take, each with
// its reason.
func TestGemmRefuses(t *testing.T) {
	k := []nd.Kernel{{Shape: []int{3, 3}, Weights: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}}}
	for _, c := range []struct {
		spec nd.Spec
		want string
	}{
		{nd.Spec{Shape: []int{8, 8}, In: nd.Float64, Kernels: k}, "float64"},
		{nd.Spec{Shape: []int{8, 8}, In: nd.Int32, Kernels: k}, "float64"},
		{nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Border: nd.Constant, CVal: math.Inf(1), Kernels: k}, "finite cval"},
		{nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{2}, Weights: []float64{1, 1e39}}}}, "finite float32 weights"},
	} {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		err = GemmWhy(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: GemmWhy = %v, want %q", c.spec.In, c.spec.CVal, err, c.want)
		}
		if _, err := NewGemm(p, GemmOptions{}); err == nil {
			t.Errorf("%v: NewGemm took it", c.spec.In)
		}
	}
}

// TestGemmCUDASyntax is TestCUDASyntax for gemm.cl: g++ checks the syntax
// and types of specialisations (the weights held and per row, split and
// exact inputs, the FP16 path, 8-bit data that the FP16 path leaves to
// TF32 — a long kernel: weights per row, one stage —, an outer axis, a
// bank in groups) where it is installed;
// the inline PTX itself only NVRTC and the device check.
func TestGemmCUDASyntax(t *testing.T) {
	check := cudaSyntaxChecker(t)
	dense := func(n int, shape ...int) []nd.Kernel {
		size := 1
		for _, s := range shape {
			size *= s
		}
		ks := make([]nd.Kernel, n)
		for b := range ks {
			w := make([]float64, size)
			for i := range w {
				w[i] = float64(i%5+b) - 2
			}
			ks[b] = nd.Kernel{Shape: shape, Weights: w}
		}
		return ks
	}
	specs := []nd.Spec{
		{Shape: []int{64, 64, 64}, In: nd.Uint8, Out: nd.Float32, Kernels: dense(32, 7, 7, 7), Mode: nd.Valid},
		{Shape: []int{256, 256}, In: nd.Float32, Kernels: dense(16, 31, 31), Border: nd.Constant},
		{Shape: []int{64, 64, 3}, In: nd.Uint16, Out: nd.Uint8, Kernels: dense(40, 5, 5), Border: nd.Wrap},
		{Shape: []int{256, 256}, In: nd.Int8, Out: nd.Int16, Kernels: dense(16, 31, 31), Border: nd.Constant, CVal: 2},
	}
	for _, spec := range specs {
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewGemm(p, GemmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := check(l, "#define __launch_bounds__(...)\nunsigned __float_as_uint(float);\nfloat __uint_as_float(unsigned);\nbool isnan(float);\nfloat __shfl_down_sync(unsigned, float, int);\n"); err != nil {
			t.Errorf("%v (%v): g++: %v\n%s", spec.Shape, l.Defines, err, out)
		}
	}
}
