// Command asm generates the FFT's SIMD loops (passes_amd64.s and the Go
// declarations in stubs_amd64.go) with avo, in AVX-512F and AVX2+FMA. Run
// it through go generate in the fft package. It lives in a module of its
// own so that avo is a dependency of the generator only, not of ndconv.
//
// The passes are whole Stockham passes of radix 2, 3, 4 or 5 over
// sequences in the vector layout (x[i*vl + v] is element i of sequence
// v), vectorised across the vl sequences: complex64 values stay
// interleaved, a vector holding 8 (AVX-512) or 4 (AVX2) of them, so that
// vl must be a multiple of 8. The butterflies are the pure-Go passes'
// (pass2 … pass5 in stockham.go) with fused multiply-adds where those
// round twice, so the results differ from them by rounding only. Beside
// them: the spectrum product (MulInto), the real transforms' pre- and
// post-processing in the same layout (realPreGo, realPostGo) and the 8×8
// block transposes that move rows into and out of it (transposeGo).
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one instruction set the passes are generated for.
type isa struct {
	name  string
	bytes int // vector width
	// hoist keeps a pass's twiddle factors in registers across its inner
	// loop; AVX2's 16 registers cannot hold radix 5's eight.
	hoist func(radix int) bool
}

var (
	avx2   = isa{name: "AVX2", bytes: 32, hoist: func(r int) bool { return r <= 4 }}
	avx512 = isa{name: "AVX512", bytes: 64, hoist: func(int) bool { return true }}
)

func (s isa) vec() reg.VecVirtual {
	if s.bytes == 64 {
		return ZMM()
	}
	return YMM()
}

func main() {
	ConstraintExpr("!noasm,amd64")
	for _, s := range []isa{avx2, avx512} {
		for _, r := range []int{2, 3, 4, 5} {
			pass(s, r)
		}
		mulSpectra(s)
		realPost(s)
		realPre(s)
	}
	transpose(avx2)
	transpose(avx512)
	Generate()
}

// pass generates one Stockham pass of the given radix:
//
//	for b < m/ns, k < ns, v < vl, with j = b·ns + k:
//	  a_p = src[(j + p·m)·vl + v] · tw[k·(radix−1) + p − 1]   (a_0 untwiddled)
//	  dst[(b·ns·radix + k + q·ns)·vl + v] = Σ_p a_p·exp(∓2πi·p·q/radix)
//
// c holds the pass's constants: c[0], c[1] = sign, −sign (the rotation by
// ∓i, forward or inverse) and, for odd radices, cos and sin of 2π·q/radix
// for q = 1 … (radix−1)/2.
func pass(s isa, radix int) {
	name := fmt.Sprintf("pass%d%s", radix, s.name)
	TEXT(name, NOSPLIT, "func(dst, src, tw []complex64, c []float32, m, ns, vl int)")
	Doc(fmt.Sprintf("%s is pass%d over vl sequences, vl a multiple of 8, in %s.", name, radix, s.name))
	out := Load(Param("dst").Base(), GP64())
	in := Load(Param("src").Base(), GP64())
	cp := Load(Param("c").Base(), GP64())
	m := Load(Param("m"), GP64())
	ns := Load(Param("ns"), GP64())
	vl := Load(Param("vl"), GP64())

	// Byte strides: between a sequence's consecutive elements (vb),
	// between the inputs of a butterfly (inStride = m·vb) and between its
	// outputs (outStride = ns·vb).
	vb := GP64()
	MOVQ(vl, vb)
	SHLQ(U8(3), vb)
	inStride := GP64()
	MOVQ(m, inStride)
	IMULQ(vb, inStride)
	outStride := GP64()
	MOVQ(ns, outStride)
	IMULQ(vb, outStride)
	var in3, out3 reg.Register
	if radix >= 4 {
		in3, out3 = GP64(), GP64()
		LEAQ(Mem{Base: inStride, Index: inStride, Scale: 2}, in3)
		LEAQ(Mem{Base: outStride, Index: outStride, Scale: 2}, out3)
	}
	at := strided
	// The outputs of one b advance by vb per k; the next b starts
	// (radix−1)·outStride further on.
	outSkip := GP64()
	IMUL3Q(U32(radix-1), outStride, outSkip)

	pm := s.vec() // (sign, −sign) in every pair of lanes
	VBROADCASTSD(Mem{Base: cp}, pm)
	h := (radix - 1) / 2
	cosv, sinpm := make([]reg.VecVirtual, h+1), make([]reg.VecVirtual, h+1)
	if radix%2 == 1 {
		for q := 1; q <= h; q++ {
			cosv[q], sinpm[q] = s.vec(), s.vec()
			VBROADCASTSS(Mem{Base: cp, Disp: 4 + 4*q}, cosv[q])
			VBROADCASTSS(Mem{Base: cp, Disp: 4 + 4*(h+q)}, sinpm[q])
			VMULPS(pm, sinpm[q], sinpm[q])
		}
	}

	twBase := Load(Param("tw").Base(), GP64())
	twp := GP64()
	bleft := GP64() // input elements left: m, less ns per b
	MOVQ(m, bleft)
	kleft, vleft := GP64(), GP64()
	store := func(q int, x reg.VecVirtual) { VMOVUPS(x, at(out, outStride, out3, q)) }
	CMPQ(ns, U8(1))
	JE(LabelRef("untwiddled"))

	Label("block")
	MOVQ(twBase, twp)
	MOVQ(ns, kleft)
	Label("k")
	wr, wi := make([]reg.VecVirtual, radix), make([]reg.VecVirtual, radix)
	loadTwiddles := func() {
		for p := 1; p < radix; p++ {
			wr[p], wi[p] = s.vec(), s.vec()
			VBROADCASTSS(Mem{Base: twp, Disp: 8 * (p - 1)}, wr[p])
			VBROADCASTSS(Mem{Base: twp, Disp: 8*(p-1) + 4}, wi[p])
		}
	}
	hoist := s.hoist(radix)
	if hoist {
		loadTwiddles()
	}
	MOVQ(vb, vleft)
	Label("v")
	if !hoist {
		loadTwiddles()
	}
	a := make([]reg.VecVirtual, radix)
	for p := range radix {
		a[p] = s.vec()
		VMOVUPS(at(in, inStride, in3, p), a[p])
		if p > 0 {
			cmul(s, a[p], wr[p], wi[p])
		}
	}
	butterfly(s, radix, a, pm, cosv, sinpm, store)
	ADDQ(U32(s.bytes), in)
	ADDQ(U32(s.bytes), out)
	SUBQ(U32(s.bytes), vleft)
	JNZ(LabelRef("v"))

	ADDQ(U32(8*(radix-1)), twp)
	DECQ(kleft)
	JNZ(LabelRef("k"))
	ADDQ(outSkip, out)
	SUBQ(ns, bleft)
	JNZ(LabelRef("block"))
	VZEROUPPER()
	RET()

	// The first pass (ns = 1): every twiddle is 1 and each b has one k.
	Label("untwiddled")
	MOVQ(vb, vleft)
	Label("untwiddledV")
	u := make([]reg.VecVirtual, radix)
	for p := range radix {
		u[p] = s.vec()
		VMOVUPS(at(in, inStride, in3, p), u[p])
	}
	butterfly(s, radix, u, pm, cosv, sinpm, store)
	ADDQ(U32(s.bytes), in)
	ADDQ(U32(s.bytes), out)
	SUBQ(U32(s.bytes), vleft)
	JNZ(LabelRef("untwiddledV"))
	ADDQ(outSkip, out)
	DECQ(bleft)
	JNZ(LabelRef("untwiddled"))
	VZEROUPPER()
	RET()
}

// strided addresses element p ≤ 4 of a run: base + p·stride, with
// stride3 = 3·stride (x86 scales only by 1, 2, 4, 8).
func strided(base, stride, stride3 reg.Register, p int) Mem {
	switch p {
	case 0:
		return Mem{Base: base}
	case 3:
		return Mem{Base: base, Index: stride3, Scale: 1}
	}
	return Mem{Base: base, Index: stride, Scale: uint8(p)}
}

// cmul sets x = x·(wr + i·wi), wr and wi broadcast: x·wr ∓ swap(x)·wi,
// subtracting in the real lanes and adding in the imaginary ones.
func cmul(s isa, x, wr, wi reg.VecVirtual) { VMOVAPS(cmulTo(s, x, wr, wi), x) }

// cmulTo returns x·(wr + i·wi) in a new register.
func cmulTo(s isa, x, wr, wi reg.VecVirtual) reg.VecVirtual {
	t := s.vec()
	VPERMILPS(U8(0xb1), x, t)
	VMULPS(wi, t, t)
	VFMADDSUB231PS(wr, x, t)
	return t
}

// butterfly computes the radix-point DFT of a (already twiddled) and
// stores output q by store(q, value).
func butterfly(s isa, radix int, a []reg.VecVirtual, pm reg.VecVirtual, cosv, sinpm []reg.VecVirtual, store func(int, reg.VecVirtual)) {
	// ∓i·x is swap(x)·(sign, −sign): radix 4 multiplies by pm, the odd
	// radices by sinpm, which fold in the sines.
	swap := func(x reg.VecVirtual) reg.VecVirtual {
		t := s.vec()
		VPERMILPS(U8(0xb1), x, t)
		return t
	}
	switch radix {
	case 2:
		y := s.vec()
		VADDPS(a[1], a[0], y)
		store(0, y)
		VSUBPS(a[1], a[0], a[0])
		store(1, a[0])
	case 4:
		t0, t1, t2, d := s.vec(), s.vec(), s.vec(), s.vec()
		VADDPS(a[2], a[0], t0)
		VSUBPS(a[2], a[0], t1)
		VADDPS(a[3], a[1], t2)
		VSUBPS(a[3], a[1], d)
		sd := swap(d)
		y := s.vec()
		VADDPS(t2, t0, y)
		store(0, y)
		VSUBPS(t2, t0, t0)
		store(2, t0)
		// t1 ± ∓i·d: swap(d)·(sign, −sign) added or subtracted.
		VMOVAPS(t1, y)
		VFMADD231PS(pm, sd, y)
		store(1, y)
		VFNMADD231PS(pm, sd, t1)
		store(3, t1)
	case 3:
		sum, dif := s.vec(), s.vec()
		VADDPS(a[2], a[1], sum)
		VSUBPS(a[2], a[1], dif)
		y := s.vec()
		VADDPS(sum, a[0], y)
		store(0, y)
		VFMADD231PS(cosv[1], sum, a[0]) // re
		rot := swap(dif)
		VMULPS(sinpm[1], rot, rot)
		VADDPS(rot, a[0], y)
		store(1, y)
		VSUBPS(rot, a[0], a[0])
		store(2, a[0])
	case 5:
		sum1, sum2, dif1, dif2 := s.vec(), s.vec(), s.vec(), s.vec()
		VADDPS(a[4], a[1], sum1)
		VADDPS(a[3], a[2], sum2)
		VSUBPS(a[4], a[1], dif1)
		VSUBPS(a[3], a[2], dif2)
		y := s.vec()
		VADDPS(sum1, a[0], y)
		VADDPS(sum2, y, y)
		store(0, y)
		re1, re2 := s.vec(), s.vec()
		VMOVAPS(a[0], re1)
		VFMADD231PS(cosv[1], sum1, re1)
		VFMADD231PS(cosv[2], sum2, re1)
		VMOVAPS(a[0], re2)
		VFMADD231PS(cosv[2], sum1, re2)
		VFMADD231PS(cosv[1], sum2, re2)
		sd1, sd2 := swap(dif1), swap(dif2)
		rot := s.vec()
		// rot1 = ∓i·(s1·dif1 + s2·dif2)
		VMULPS(sinpm[1], sd1, rot)
		VFMADD231PS(sinpm[2], sd2, rot)
		VADDPS(rot, re1, y)
		store(1, y)
		VSUBPS(rot, re1, re1)
		store(4, re1)
		// rot2 = ∓i·(s2·dif1 − s1·dif2)
		VMULPS(sinpm[2], sd1, rot)
		VFNMADD231PS(sinpm[1], sd2, rot)
		VADDPS(rot, re2, y)
		store(2, y)
		VSUBPS(rot, re2, re2)
		store(3, re2)
	default:
		panic("radix")
	}
}

// mulSpectra generates dst[i] = a[i]·b[i] over the first len(dst)
// rounded down to a multiple of 8 complex64 values; the caller does the
// rest.
func mulSpectra(s isa) {
	name := "mulSpectra" + s.name
	TEXT(name, NOSPLIT, "func(dst, a, b []complex64)")
	Doc(name + " is MulInto over the first len(dst) rounded down to a multiple of 8, in " + s.name + ".")
	dp := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	ap := Load(Param("a").Base(), GP64())
	bp := Load(Param("b").Base(), GP64())
	// Whole runs of 8 values (64 bytes), as vectorLanes in vector.go.
	SHLQ(U8(3), n)
	ANDQ(I32(-64), n)
	JZ(LabelRef("done"))
	i := GP64()
	XORQ(i, i)
	Label("loop")
	for u := 0; u < 64; u += s.bytes {
		x, y, br, bi := s.vec(), s.vec(), s.vec(), s.vec()
		VMOVUPS(Mem{Base: ap, Index: i, Scale: 1, Disp: u}, x)
		VMOVUPS(Mem{Base: bp, Index: i, Scale: 1, Disp: u}, y)
		VMOVSLDUP(y, br) // real parts in both lanes of a pair
		VMOVSHDUP(y, bi) // imaginary parts
		cmul(s, x, br, bi)
		VMOVUPS(x, Mem{Base: dp, Index: i, Scale: 1, Disp: u})
	}
	ADDQ(U32(64), i)
	CMPQ(i, n)
	JL(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

// realPost generates the real forward transform's post-processing in the
// vector layout, for k in [1, h):
//
//	a = z[k], b = conj z[h−k], e = a + b, d = a − b
//	dst[k] = e/2 + w[k]·(−i·d/2)
//
// element k being the gs values at k·gs. c = {1, −1, 0.5, −0.5}.
func realPost(s isa) {
	var halfpm, half reg.VecVirtual
	mirrorLoop(s, "realPost", "realPostGo for k in [1, h)", 1, func(cp reg.Register) {
		halfpm, half = s.vec(), s.vec()
		VBROADCASTSD(Mem{Base: cp, Disp: 8}, halfpm)
		VBROADCASTSS(Mem{Base: cp, Disp: 8}, half)
	}, func(a, b, wr, wi reg.VecVirtual) reg.VecVirtual {
		e := s.vec()
		VADDPS(b, a, e)
		VSUBPS(b, a, a)
		VPERMILPS(U8(0xb1), a, a)
		VMULPS(halfpm, a, a) // o = −i·d/2
		o := cmulTo(s, a, wr, wi)
		VFMADD231PS(half, e, o)
		return o
	})
}

// realPre generates the real inverse transform's pre-processing in the
// vector layout, for k in [0, h):
//
//	a = x[k], b = conj x[h−k], o = (a − b)·iw[k]
//	dst[k] = a + b + i·o
//
// c = {1, −1, 0.5, −0.5, −1, 1}.
func realPre(s isa) {
	var mp reg.VecVirtual
	mirrorLoop(s, "realPre", "realPreGo", 0, func(cp reg.Register) {
		mp = s.vec()
		VBROADCASTSD(Mem{Base: cp, Disp: 16}, mp)
	}, func(a, b, wr, wi reg.VecVirtual) reg.VecVirtual {
		e := s.vec()
		VADDPS(b, a, e)
		VSUBPS(b, a, a)
		o := cmulTo(s, a, wr, wi)
		VPERMILPS(U8(0xb1), o, o)
		VFMADD231PS(mp, o, e) // e + i·o: (−im, re)
		return e
	})
}

// mirrorLoop generates func(dst, x, w []complex64, c []float32, h, gs int)
// setting, for k in [k0, h) and every lane, dst[k] = body(x[k],
// conj x[h−k], w[k]): element k is the gs values at k·gs (gs a multiple of
// 8), w[k] comes broadcast as its real and imaginary parts, and c starts
// with the conjugation's lane-pair multipliers {1, −1}; setup loads the
// body's other constants from c.
func mirrorLoop(s isa, name, twin string, k0 int, setup func(cp reg.Register), body func(a, b, wr, wi reg.VecVirtual) reg.VecVirtual) {
	name += s.name
	TEXT(name, NOSPLIT, "func(dst, x, w []complex64, c []float32, h, gs int)")
	Doc(fmt.Sprintf("%s is %s, gs a multiple of 8, in %s.", name, twin, s.name))
	out := Load(Param("dst").Base(), GP64())
	xk := Load(Param("x").Base(), GP64())
	wp := Load(Param("w").Base(), GP64())
	cp := Load(Param("c").Base(), GP64())
	h := Load(Param("h"), GP64())
	gsb := Load(Param("gs"), GP64())
	SHLQ(U8(3), gsb)
	conj := s.vec()
	VBROADCASTSD(Mem{Base: cp}, conj)
	setup(cp)
	// xc walks down from element h−k0 while xk and out walk up from k0.
	kleft, xc := GP64(), GP64()
	MOVQ(h, kleft)
	SUBQ(U32(k0), kleft)
	MOVQ(kleft, xc)
	IMULQ(gsb, xc)
	ADDQ(xk, xc)
	if k0 > 0 {
		ADDQ(gsb, xk)
		ADDQ(gsb, out)
		ADDQ(U32(8), wp)
	}
	TESTQ(kleft, kleft)
	JLE(LabelRef("done"))
	v := GP64()
	Label("k")
	wr, wi := s.vec(), s.vec()
	VBROADCASTSS(Mem{Base: wp}, wr)
	VBROADCASTSS(Mem{Base: wp, Disp: 4}, wi)
	XORQ(v, v)
	Label("v")
	a, b := s.vec(), s.vec()
	VMOVUPS(Mem{Base: xk, Index: v, Scale: 1}, a)
	VMULPS(Mem{Base: xc, Index: v, Scale: 1}, conj, b)
	VMOVUPS(body(a, b, wr, wi), Mem{Base: out, Index: v, Scale: 1})
	ADDQ(U32(s.bytes), v)
	CMPQ(v, gsb)
	JL(LabelRef("v"))
	ADDQ(gsb, xk)
	ADDQ(gsb, out)
	SUBQ(gsb, xc)
	ADDQ(U32(8), wp)
	DECQ(kleft)
	JNZ(LabelRef("k"))
	Label("done")
	VZEROUPPER()
	RET()
}

// transpose generates dst[c·ds + r] = src[r·ss + c] for r < rows and
// c < cols rounded down to multiples of 8 (complex64 values, strides in
// values), by 8×8 blocks transposed in registers (AVX2: as four 4×4); the caller
// does the rest.
func transpose(s isa) {
	name := "transpose" + s.name
	TEXT(name, NOSPLIT, "func(dst []complex64, ds int, src []complex64, ss int, rows, cols int)")
	Doc(name + " is transposeGo over whole 8×8 blocks, in " + s.name + ".")
	dst := Load(Param("dst").Base(), GP64())
	dsb := Load(Param("ds"), GP64())
	src := Load(Param("src").Base(), GP64())
	ssb := Load(Param("ss"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	SHLQ(U8(3), dsb)
	SHLQ(U8(3), ssb)
	SHRQ(U8(3), rows)
	JZ(LabelRef("done"))
	SHRQ(U8(3), cols)
	JZ(LabelRef("done"))
	ds3, ss3 := GP64(), GP64()
	LEAQ(Mem{Base: dsb, Index: dsb, Scale: 2}, ds3)
	LEAQ(Mem{Base: ssb, Index: ssb, Scale: 2}, ss3)
	sp, dp, sp4, dp4, cleft := GP64(), GP64(), GP64(), GP64(), GP64()
	Label("rowBlock")
	MOVQ(src, sp)
	MOVQ(dst, dp)
	MOVQ(cols, cleft)
	Label("colBlock")
	LEAQ(Mem{Base: sp, Index: ssb, Scale: 4}, sp4)
	LEAQ(Mem{Base: dp, Index: dsb, Scale: 4}, dp4)
	// row j < 8 of a block: base + j·stride, base4 = base + 4·stride.
	at := func(base, base4, stride, stride3 reg.Register, j int) Mem {
		if j >= 4 {
			return strided(base4, stride, stride3, j-4)
		}
		return strided(base, stride, stride3, j)
	}
	if s.bytes == 64 {
		transpose8(sp, sp4, ssb, ss3, dp, dp4, dsb, ds3, at)
	} else {
		// Four 4×4 blocks: rows rb… of the source to columns rb… of the
		// destination.
		for _, rb := range []int{0, 4} {
			for _, cb := range []int{0, 4} {
				r := make([]reg.VecVirtual, 4)
				for j := range r {
					r[j] = YMM()
					m := at(sp, sp4, ssb, ss3, rb+j)
					m.Disp = 8 * cb
					VMOVUPS(m, r[j])
				}
				t := make([]reg.VecVirtual, 4)
				for i := 0; i < 2; i++ {
					t[2*i], t[2*i+1] = YMM(), YMM()
					VUNPCKLPD(r[2*i+1], r[2*i], t[2*i])
					VUNPCKHPD(r[2*i+1], r[2*i], t[2*i+1])
				}
				// t0 = (a0 b0 | a2 b2), t1 = (a1 b1 | a3 b3), t2 and t3 the
				// same of rows c, d: columns 0 and 2 from t0/t2, 1 and 3
				// from t1/t3.
				for i, col := range [][2]int{{0, 2}, {1, 3}} {
					lo, hi := YMM(), YMM()
					VPERM2F128(U8(0x20), t[i+2], t[i], lo)
					VPERM2F128(U8(0x31), t[i+2], t[i], hi)
					for k, x := range []reg.VecVirtual{lo, hi} {
						m := at(dp, dp4, dsb, ds3, cb+col[k])
						m.Disp = 8 * rb
						VMOVUPS(x, m)
					}
				}
			}
		}
	}
	ADDQ(U32(64), sp)
	LEAQ(Mem{Base: dp4, Index: dsb, Scale: 4}, dp)
	DECQ(cleft)
	JNZ(LabelRef("colBlock"))
	LEAQ(Mem{Base: src, Index: ssb, Scale: 8}, src)
	ADDQ(U32(64), dst)
	DECQ(rows)
	JNZ(LabelRef("rowBlock"))
	Label("done")
	VZEROUPPER()
	RET()
}

// transpose8 transposes the 8×8 block of complex64 values whose source
// rows at(sp, sp4, ss, ss3, j) and destination rows at(dp, …, c) it is
// given, in AVX-512 registers.
func transpose8(sp, sp4, ss, ss3, dp, dp4, ds, ds3 reg.Register, at func(base, base4, stride, stride3 reg.Register, j int) Mem) {
	r := make([]reg.VecVirtual, 8)
	for j := range r {
		r[j] = ZMM()
		VMOVUPS(at(sp, sp4, ss, ss3, j), r[j])
	}
	// t[2i] = (r2i_0, r2i+1_0, r2i_2, r2i+1_2, …), t[2i+1] the odd columns.
	t := make([]reg.VecVirtual, 8)
	for i := 0; i < 4; i++ {
		t[2*i], t[2*i+1] = ZMM(), ZMM()
		VUNPCKLPD(r[2*i+1], r[2*i], t[2*i])
		VUNPCKHPD(r[2*i+1], r[2*i], t[2*i+1])
	}
	// u: pairs of rows 0–3 (from t0/t2 or t1/t3) and 4–7, 128-bit lanes
	// 0 and 2 (columns c, c+4) or 1 and 3 (columns c+2, c+6).
	u := make([]reg.VecVirtual, 8)
	for i, x := range []struct {
		lo, hi int
		imm    uint8
	}{
		{0, 2, 0x88}, {0, 2, 0xdd}, {1, 3, 0x88}, {1, 3, 0xdd},
		{4, 6, 0x88}, {4, 6, 0xdd}, {5, 7, 0x88}, {5, 7, 0xdd},
	} {
		u[i] = ZMM()
		VSHUFF64X2(U8(x.imm), t[x.hi], t[x.lo], u[i])
	}
	// u0 holds columns 0 and 4 of rows 0–3, u4 of rows 4–7; u1/u5 columns
	// 2 and 6; u2/u6 columns 1 and 5; u3/u7 columns 3 and 7.
	for i, col := range [][2]int{{0, 4}, {2, 6}, {1, 5}, {3, 7}} {
		lo, hi := ZMM(), ZMM()
		VSHUFF64X2(U8(0x88), u[i+4], u[i], lo)
		VSHUFF64X2(U8(0xdd), u[i+4], u[i], hi)
		VMOVUPS(lo, at(dp, dp4, ds, ds3, col[0]))
		VMOVUPS(hi, at(dp, dp4, ds, ds3, col[1]))
	}
}
