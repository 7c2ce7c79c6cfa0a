// Command asm generates the CPU engine's SIMD loops (simd_amd64.s and the
// Go declarations in stubs_amd64.go) with avo. Run it through go generate
// in the simd package. It lives in a module of its own so that avo is a
// dependency of the generator only, not of ndconv.
//
// Every loop vectorises across outputs, never across taps: each output's
// taps are applied one after the other, in the order given, each with one
// fused multiply-add (VFMADD231: a single rounding), so that the results
// equal the scalar loops of the simd package bit for bit.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one instruction set the loops are generated for.
type isa struct {
	name   string
	bytes  int // vector width
	masked bool
	blocks []int // vectors per block of outputs, widest first
	// blockVectors and bankVectors are the vectors per accumulator set of
	// the register-blocked loops: sets × vectors accumulators, as many
	// source vectors and a weight fit in the vector registers (32 with
	// AVX-512, 16 with AVX2). runsVectors is blockVectors for the row
	// block that follows a program (blockRuns).
	blockVectors, bankVectors, runsVectors int
	// dense3Vectors: the vectors a row of the dense 3×3 loop (4 rows,
	// nine weights in registers).
	dense3Vectors int
	// fullSteps: the row blocks test a step's mask for every set at
	// once, and a step that adds to every set skips the sets' tests.
	fullSteps bool
}

// elem is one floating-point type and its instructions.
type elem struct {
	name, gotype string
	size         int
	broadcast    func(...Op)      // scalar to every lane
	fma          func(...Op)      // acc += a·b, one rounding, every lane
	move         func(...Op)      // unaligned load or store, with an optional mask
	loadMasked   func(a, k, b Op) // load, zeroing the lanes the mask leaves out
	moveScalar   func(...Op)
	fmaScalar    func(...Op)
}

var (
	avx2 = isa{name: "AVX2", bytes: 32, blocks: []int{8, 4, 1}, blockVectors: 3, bankVectors: 1, runsVectors: 3, dense3Vectors: 1, fullSteps: true}
	// AVX-512's row block following a program takes 6 vectors a row (24
	// accumulators, 6 source vectors and a weight: 31 of the 32
	// registers): each step's source loads and weight broadcasts are
	// shared by more fused multiply-adds than the step loop's 4 × 4.
	avx512 = isa{name: "AVX512", bytes: 64, masked: true, blocks: []int{8, 4, 1}, blockVectors: 4, bankVectors: 3, runsVectors: 6, dense3Vectors: 4}
	f32    = elem{name: "F32", gotype: "float32", size: 4, broadcast: VBROADCASTSS, fma: VFMADD231PS,
		move: VMOVUPS, loadMasked: VMOVUPS_Z, moveScalar: VMOVSS, fmaScalar: VFMADD231SS}
	f64 = elem{name: "F64", gotype: "float64", size: 8, broadcast: VBROADCASTSD, fma: VFMADD231PD,
		move: VMOVUPD, loadMasked: VMOVUPD_Z, moveScalar: VMOVSD, fmaScalar: VFMADD231SD}
)

func (s isa) vec() reg.VecVirtual {
	if s.bytes == 64 {
		return ZMM()
	}
	return YMM()
}

// zero clears a vector register: VPXORD for 512 bits needs only AVX-512F
// (VXORPS there needs AVX-512DQ).
func (s isa) zero(v reg.Register) {
	if s.bytes == 64 {
		VPXORD(v, v, v)
	} else {
		VXORPS(v, v, v)
	}
}

// ret emits the label "return", where every loop ends, and the return,
// clearing the upper vector state for SSE code that follows.
func ret() {
	Label("return")
	VZEROUPPER()
	RET()
}

func main() {
	ConstraintExpr("!noasm,amd64")
	for _, s := range []isa{avx2, avx512} {
		for _, e := range []elem{f32, f64} {
			taps(s, e, false, true)
			taps(s, e, false, false)
			taps(s, e, true, true)
			axpy(s, e)
			block(s, e, "block", blockRows, s.blockVectors, false)
			block(s, e, "bank", bankSets, s.bankVectors, false)
			block(s, e, "blockRuns", blockRows, s.runsVectors, true)
			dense3(s, e)
		}
		for _, i := range []integer{u8, u16} {
			widen(s, i)
			narrow(s, i)
		}
		peak(s)
	}
	transpose8()
	Generate()
}

// taps generates acc[x] = fma(w[t], src[off(t)+x], acc[x]) for t in order,
// for every x < len(acc), where off(t) is offs[t], or t for the dense row;
// with accumulate false, acc[x] starts from +0 instead of its value.
func taps(s isa, e elem, dense, accumulate bool) {
	name := fmt.Sprintf("taps%s%s", s.name, e.name)
	if !accumulate {
		name = fmt.Sprintf("setTaps%s%s", s.name, e.name)
	}
	sig := fmt.Sprintf("func(acc, src []%s, offs []int, w []%s)", e.gotype, e.gotype)
	if dense {
		name = fmt.Sprintf("row%s%s", s.name, e.name)
		sig = fmt.Sprintf("func(acc, src, w []%s)", e.gotype)
	}
	TEXT(name, NOSPLIT, sig)
	switch {
	case dense:
		Doc(name + " is rowGo in " + s.name + ".")
	case !accumulate:
		Doc(name + " is setTapsGo in " + s.name + ".")
	default:
		Doc(name + " is tapsGo in " + s.name + ".")
	}
	accp := Load(Param("acc").Base(), GP64())
	n := Load(Param("acc").Len(), GP64())
	srcp := Load(Param("src").Base(), GP64())
	wp := Load(Param("w").Base(), GP64())
	ntaps := Load(Param("w").Len(), GP64())
	var offp reg.Register
	if !dense {
		offp = Load(Param("offs").Base(), GP64())
	}
	lanes := s.bytes / e.size
	x := GP64()
	XORQ(x, x)
	t := GP64()
	rest := GP64()
	p := GP64()
	w := s.vec()

	// tapAddress sets p so that Mem{Base: p} is src[off(t)+x].
	tapAddress := func() {
		if dense {
			LEAQ(Mem{Base: p, Disp: e.size}, p)
			return
		}
		MOVQ(Mem{Base: offp, Index: t, Scale: 8}, p)
		ADDQ(x, p)
		LEAQ(Mem{Base: srcp, Index: p, Scale: uint8(e.size)}, p)
	}
	startTaps := func() {
		XORQ(t, t)
		if dense {
			// p runs one element ahead of the tap: tapAddress advances it first.
			LEAQ(Mem{Base: srcp, Index: x, Scale: uint8(e.size), Disp: -e.size}, p)
		}
	}

	for _, v := range s.blocks {
		tapLoop, tapsDone := fmt.Sprintf("block%dTap", v), fmt.Sprintf("block%dTapsDone", v)
		blocks(fmt.Sprintf("block%d", v), n, x, rest, v*lanes, func() {
			acc := make([]reg.VecVirtual, v)
			for i := range acc {
				acc[i] = s.vec()
				if accumulate {
					e.move(Mem{Base: accp, Index: x, Scale: uint8(e.size), Disp: i * s.bytes}, acc[i])
				} else {
					s.zero(acc[i])
				}
			}
			startTaps()
			Label(tapLoop)
			CMPQ(t, ntaps)
			JGE(LabelRef(tapsDone))
			tapAddress()
			e.broadcast(Mem{Base: wp, Index: t, Scale: uint8(e.size)}, w)
			for i := range acc {
				e.fma(Mem{Base: p, Disp: i * s.bytes}, w, acc[i])
			}
			INCQ(t)
			JMP(LabelRef(tapLoop))
			Label(tapsDone)
			for i := range acc {
				e.move(acc[i], Mem{Base: accp, Index: x, Scale: uint8(e.size), Disp: i * s.bytes})
			}
		})
	}

	// The last len(acc) mod lanes outputs.
	if s.masked {
		k := tailMask(rest)
		acc, in := s.vec(), s.vec()
		if accumulate {
			e.loadMasked(Mem{Base: accp, Index: x, Scale: uint8(e.size)}, k, acc)
		} else {
			s.zero(acc)
		}
		startTaps()
		Label("tailTap")
		CMPQ(t, ntaps)
		JGE(LabelRef("tailDone"))
		tapAddress()
		e.loadMasked(Mem{Base: p}, k, in)
		e.broadcast(Mem{Base: wp, Index: t, Scale: uint8(e.size)}, w)
		e.fma(in, w, acc)
		INCQ(t)
		JMP(LabelRef("tailTap"))
		Label("tailDone")
		e.move(acc, k, Mem{Base: accp, Index: x, Scale: uint8(e.size)})
	} else {
		Label("scalar")
		CMPQ(x, n)
		JGE(LabelRef("return"))
		acc, wx := XMM(), XMM()
		if accumulate {
			e.moveScalar(Mem{Base: accp, Index: x, Scale: uint8(e.size)}, acc)
		} else {
			VXORPS(acc, acc, acc)
		}
		startTaps()
		Label("scalarTap")
		CMPQ(t, ntaps)
		JGE(LabelRef("scalarDone"))
		tapAddress()
		e.moveScalar(Mem{Base: wp, Index: t, Scale: uint8(e.size)}, wx)
		e.fmaScalar(Mem{Base: p}, wx, acc)
		INCQ(t)
		JMP(LabelRef("scalarTap"))
		Label("scalarDone")
		e.moveScalar(acc, Mem{Base: accp, Index: x, Scale: uint8(e.size)})
		INCQ(x)
		JMP(LabelRef("scalar"))
	}
	ret()
}

// axpy generates y[i] = fma(a, x[i], y[i]) for every i < len(y).
func axpy(s isa, e elem) {
	name := fmt.Sprintf("axpy%s%s", s.name, e.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(y, x []%s, a %s)", e.gotype, e.gotype))
	Doc(name + " is axpyGo in " + s.name + ".")
	yp := Load(Param("y").Base(), GP64())
	n := Load(Param("y").Len(), GP64())
	xp := Load(Param("x").Base(), GP64())
	ax := Load(Param("a"), XMM())
	a := s.vec()
	e.broadcast(ax, a)
	lanes := s.bytes / e.size
	i := GP64()
	XORQ(i, i)
	rest := GP64()
	for _, v := range []int{4, 1} {
		blocks(fmt.Sprintf("block%d", v), n, i, rest, v*lanes, func() {
			ys := make([]reg.VecVirtual, v)
			for j := range ys {
				ys[j] = s.vec()
				e.move(Mem{Base: yp, Index: i, Scale: uint8(e.size), Disp: j * s.bytes}, ys[j])
			}
			for j := range ys {
				e.fma(Mem{Base: xp, Index: i, Scale: uint8(e.size), Disp: j * s.bytes}, a, ys[j])
			}
			for j := range ys {
				e.move(ys[j], Mem{Base: yp, Index: i, Scale: uint8(e.size), Disp: j * s.bytes})
			}
		})
	}
	if s.masked {
		k := tailMask(rest)
		y, in := s.vec(), s.vec()
		e.loadMasked(Mem{Base: yp, Index: i, Scale: uint8(e.size)}, k, y)
		e.loadMasked(Mem{Base: xp, Index: i, Scale: uint8(e.size)}, k, in)
		e.fma(in, a, y)
		e.move(y, k, Mem{Base: yp, Index: i, Scale: uint8(e.size)})
	} else {
		Label("scalar")
		CMPQ(i, n)
		JGE(LabelRef("return"))
		y := XMM()
		e.moveScalar(Mem{Base: yp, Index: i, Scale: uint8(e.size)}, y)
		e.fmaScalar(Mem{Base: xp, Index: i, Scale: uint8(e.size)}, ax, y)
		e.moveScalar(y, Mem{Base: yp, Index: i, Scale: uint8(e.size)})
		INCQ(i)
		JMP(LabelRef("scalar"))
	}
	ret()
}

// integer is an unsigned sample type the float32 rows load from and store
// into.
type integer struct {
	name, gotype string
	size         int
	max          float32
}

var (
	u8  = integer{name: "Uint8", gotype: "uint8", size: 1, max: 255}
	u16 = integer{name: "Uint16", gotype: "uint16", size: 2, max: 65535}
)

// blocks emits a loop that runs body while at least step of the n
// elements from i on remain, advancing i by step; rest is left holding the
// elements remaining after it.
func blocks(label string, n, i, rest reg.Register, step int, body func()) {
	Label(label)
	MOVQ(n, rest)
	SUBQ(i, rest)
	CMPQ(rest, U32(step))
	JL(LabelRef(label + "Done"))
	body()
	ADDQ(U32(step), i)
	JMP(LabelRef(label))
	Label(label + "Done")
}

// tailMask returns to the label "return" when rest is 0, and otherwise
// gives a mask register with the low rest bits set.
func tailMask(rest reg.Register) reg.Register {
	CMPQ(rest, Imm(0))
	JE(LabelRef("return"))
	return lowBits(rest)
}

// lowBits gives a mask register with the low n bits set (n ≤ 16).
func lowBits(n reg.Register) reg.Register {
	k := K()
	setLowBits(k, n)
	return k
}

// setLowBits sets the low n bits of the mask register k, and clears the
// others (n ≤ 16).
func setLowBits(k, n reg.Register) {
	mask := GP64()
	MOVQ(U32(1), mask)
	SHLXQ(n, mask, mask)
	DECQ(mask)
	KMOVW(mask.As32(), k)
}

// maskedTail emits the pass over the last rest outputs (0 < rest <
// vectors·lanes): pass(nv, k) with as many vectors nv as rest needs, the
// last one under the mask k of its lanes, then a jump to "return".
func maskedTail(rest reg.Register, lanes, vectors int, pass func(nv int, k reg.Register)) {
	k := K()
	for nv := 1; nv <= vectors; nv++ {
		next := fmt.Sprintf("notTail%d", nv)
		if nv < vectors {
			CMPQ(rest, U32(nv*lanes))
			JG(LabelRef(next))
		}
		if nv > 1 {
			SUBQ(U32((nv-1)*lanes), rest) // the last vector's lanes
		}
		setLowBits(k, rest)
		pass(nv, k)
		JMP(LabelRef("return"))
		Label(next)
	}
}

// widen generates dst[i] = float32(src[i]), exact for these types.
func widen(s isa, t integer) {
	name := fmt.Sprintf("load%s%s", t.name, s.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst []float32, src []%s)", t.gotype))
	Doc(name + " is load" + t.name + "Go in " + s.name + ".")
	dp := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	sp := Load(Param("src").Base(), GP64())
	lanes := s.bytes / 4
	i, rest := GP64(), GP64()
	XORQ(i, i)
	extend := func(src Op, dst reg.Register) {
		if t.size == 1 {
			VPMOVZXBD(src, dst)
		} else {
			VPMOVZXWD(src, dst)
		}
	}
	v := s.vec()
	blocks("block", n, i, rest, lanes, func() {
		extend(Mem{Base: sp, Index: i, Scale: uint8(t.size)}, v)
		VCVTDQ2PS(v, v)
		VMOVUPS(v, Mem{Base: dp, Index: i, Scale: 4})
	})
	if s.masked {
		k := tailMask(rest)
		if t.size == 1 {
			VPMOVZXBD_Z(Mem{Base: sp, Index: i, Scale: 1}, k, v)
		} else {
			VPMOVZXWD_Z(Mem{Base: sp, Index: i, Scale: 2}, k, v)
		}
		VCVTDQ2PS(v, v)
		VMOVUPS(v, k, Mem{Base: dp, Index: i, Scale: 4})
	} else {
		Label("scalar")
		CMPQ(i, n)
		JGE(LabelRef("return"))
		r, x := GP32(), XMM()
		if t.size == 1 {
			MOVBLZX(Mem{Base: sp, Index: i, Scale: 1}, r)
		} else {
			MOVWLZX(Mem{Base: sp, Index: i, Scale: 2}, r)
		}
		VCVTSI2SSL(r, x, x)
		VMOVSS(x, Mem{Base: dp, Index: i, Scale: 4})
		INCQ(i)
		JMP(LabelRef("scalar"))
	}
	ret()
}

// narrow generates dst[i] = src[i] rounded half to even and saturated to
// the type's range, NaN to 0: the maximum with 0 (which gives its second
// operand, the 0, for NaN), the minimum with the top of the range, then the
// conversion, which rounds half to even (the MXCSR default Go keeps).
func narrow(s isa, t integer) {
	name := fmt.Sprintf("store%s%s", t.name, s.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst []%s, src []float32)", t.gotype))
	Doc(name + " is store" + t.name + "Go in " + s.name + ".")
	dp := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	sp := Load(Param("src").Base(), GP64())
	lanes := s.bytes / 4
	zero, top := s.vec(), s.vec()
	s.zero(zero)
	bits := GP32()
	MOVL(U32(math.Float32bits(t.max)), bits)
	topx := XMM()
	VMOVD(bits, topx)
	VBROADCASTSS(topx, top)
	i, rest := GP64(), GP64()
	XORQ(i, i)
	clamp := func(v reg.Register) {
		VMAXPS(zero, v, v)
		VMINPS(top, v, v)
		VCVTPS2DQ(v, v)
	}
	v := s.vec()
	out := Mem{Base: dp, Index: i, Scale: uint8(t.size)}
	blocks("block", n, i, rest, lanes, func() {
		VMOVUPS(Mem{Base: sp, Index: i, Scale: 4}, v)
		clamp(v)
		if s.masked {
			if t.size == 1 {
				VPMOVDB(v, out)
			} else {
				VPMOVDW(v, out)
			}
			return
		}
		hi, lo := XMM(), XMM()
		VEXTRACTI128(U8(1), v, hi)
		VPACKUSDW(hi, v.AsX(), lo)
		if t.size == 1 {
			VPACKUSWB(lo, lo, lo)
			VMOVQ(lo, out)
		} else {
			VMOVDQU(lo, out)
		}
	})
	if s.masked {
		k := tailMask(rest)
		VMOVUPS_Z(Mem{Base: sp, Index: i, Scale: 4}, k, v)
		clamp(v)
		if t.size == 1 {
			VPMOVDB(v, k, out)
		} else {
			VPMOVDW(v, k, out)
		}
	} else {
		Label("scalar")
		CMPQ(i, n)
		JGE(LabelRef("return"))
		x, r := XMM(), GP32()
		VMOVSS(Mem{Base: sp, Index: i, Scale: 4}, x)
		VMAXSS(zero.AsX(), x, x)
		VMINSS(top.AsX(), x, x)
		VCVTSS2SI(x, r)
		if t.size == 1 {
			MOVB(r.As8(), out)
		} else {
			MOVW(r.As16(), out)
		}
		INCQ(i)
		JMP(LabelRef("scalar"))
	}
	ret()
}

// peakChains is the number of independent multiply-add chains of the peak
// loop: more than FMA latency × FMA units on current cores (4 × 2).
const peakChains = 12

// peak generates n rounds of peakChains independent float32 vector
// multiply-adds, acc = acc·m + c, with nothing to load or store: the
// engine's arithmetic peak, for the roofline.
func peak(s isa) {
	name := "fmaPeak" + s.name
	TEXT(name, NOSPLIT, "func(n int)")
	Doc(fmt.Sprintf("%s runs n rounds of %d independent vector multiply-adds.", name, peakChains))
	n := Load(Param("n"), GP64())
	bits := GP32()
	x := XMM()
	m, c := s.vec(), s.vec()
	MOVL(U32(math.Float32bits(0.9999)), bits)
	VMOVD(bits, x)
	VBROADCASTSS(x, m)
	MOVL(U32(math.Float32bits(0.0001)), bits)
	VMOVD(bits, x)
	VBROADCASTSS(x, c)
	acc := make([]reg.VecVirtual, peakChains)
	for i := range acc {
		acc[i] = s.vec()
		MOVL(U32(math.Float32bits(float32(i))), bits)
		VMOVD(bits, x)
		VBROADCASTSS(x, acc[i])
	}
	Label("round")
	CMPQ(n, Imm(0))
	JLE(LabelRef("return"))
	for i := range acc {
		VFMADD213PS(c, m, acc[i])
	}
	DECQ(n)
	JMP(LabelRef("round"))
	ret()
}

// blockRows is the number of output rows the register-blocked loop
// computes at once (simd.BlockRows), and bankSets the number of
// accumulator sets of the bank loop (simd.BankSets): a bank's kernels,
// or its kernels × a few rows.
const blockRows, bankSets = 4, 8

// block generates a register-blocked loop over sets accumulator sets of n
// values, set i at out[i·outPitch:], all starting from +0; for each step s
// in order, the source vectors at src[steps[s]>>8 + x] are loaded once and,
// for each set i whose bit is set in steps[s]&0xff, added with weight
// w[s·sets+i]: out[i][x] = fma(w, src[…+x], out[i][x]). The sets are
// output rows (block) or a bank's kernels and rows (bank).
//
// With runs, the widest pass follows prog instead (see NewSteps): runs of
// consecutive steps that add to the same sets, each run a header word
// (count<<8 | mask) and count records (the step's source offset in bytes,
// then its sets' weights packed), ended by a zero word; each mask has a
// body of its own, so a step costs no mask tests and no step-word
// decoding. Outputs past the whole passes take one more such pass that
// ends at n (it computes some outputs twice, with the same bits) where n
// allows one; otherwise steps and w: the narrower passes and the scalar
// tail, or with masks one pass whose last vector is masked.
func block(s isa, e elem, kind string, sets, vectors int, runs bool) {
	name := fmt.Sprintf("%s%s%s", kind, s.name, e.name)
	sig := fmt.Sprintf("func(out []%s, outPitch, n int, src []%s, steps []int, w []%s)", e.gotype, e.gotype, e.gotype)
	if runs {
		sig = fmt.Sprintf("func(out []%s, outPitch, n int, src []%s, steps []int, w []%s, prog []uint64)", e.gotype, e.gotype, e.gotype)
	}
	TEXT(name, NOSPLIT, sig)
	if runs {
		Doc(name + " is blockRunsGo in " + s.name + fmt.Sprintf(" for %d sets.", sets))
	} else {
		Doc(name + " is blockGo in " + s.name + fmt.Sprintf(" for %d sets.", sets))
	}
	outp := Load(Param("out").Base(), GP64())
	pitch := Load(Param("outPitch"), GP64())
	SHLQ(U8(map[int]int{4: 2, 8: 3}[e.size]), pitch) // in bytes
	n := Load(Param("n"), GP64())
	srcp := Load(Param("src").Base(), GP64())
	stepp := Load(Param("steps").Base(), GP64())
	end := Load(Param("steps").Len(), GP64())
	LEAQ(Mem{Base: stepp, Index: end, Scale: 8}, end) // past the last step
	wp := Load(Param("w").Base(), GP64())
	lanes := s.bytes / e.size
	x, rest := GP64(), GP64()
	XORQ(x, x)
	wv := s.vec()

	// run emits the step loop for v vectors (or one masked vector, or one
	// scalar) per row, then the stores.
	// The registers of the widest pass, allocated once: every pass uses
	// the first of them (fewer virtual registers keep avo's allocator
	// within the register file).
	accAll := make([][]reg.Register, sets)
	for i := range accAll {
		for range vectors {
			accAll[i] = append(accAll[i], s.vec())
		}
	}
	inAll := make([]reg.Register, vectors)
	for j := range inAll {
		inAll[j] = s.vec()
	}
	sp, wq, srcx, p, m := GP64(), GP64(), GP64(), GP64(), GP64()

	run := func(prefix string, v int, k reg.Register, scalar bool) {
		acc := make([][]reg.Register, sets)
		for i := range acc {
			for j := range v {
				a := accAll[i][j]
				if scalar {
					a = a.(reg.VecVirtual).AsX()
					VXORPS(a, a, a)
				} else {
					s.zero(a)
				}
				acc[i] = append(acc[i], a)
			}
		}
		in := make([]reg.Register, v)
		for j := range in {
			in[j] = inAll[j]
			if scalar {
				in[j] = inAll[j].(reg.VecVirtual).AsX()
			}
		}
		// The step loop tests its end at the bottom, and addresses the
		// source from srcx (src at x) with the step's offset as the
		// index: 6 instructions of overhead per step besides the loads
		// and the sets' tests, one of them a load.
		MOVQ(stepp, sp)
		MOVQ(wp, wq)
		LEAQ(Mem{Base: srcp, Index: x, Scale: uint8(e.size)}, srcx)
		CMPQ(sp, end)
		JE(LabelRef(prefix + "StepsDone"))
		Label(prefix + "Step")
		MOVQ(Mem{Base: sp}, m) // the sets' mask in the low byte
		MOVQ(m, p)             // a register move: no second load
		SHRQ(U8(8), p)
		for j := range in {
			at := Mem{Base: srcx, Index: p, Scale: uint8(e.size), Disp: j * s.bytes}
			switch {
			case scalar:
				e.moveScalar(at, in[j])
			case k != nil && j == len(in)-1:
				e.loadMasked(at, k, in[j])
			default:
				e.move(at, in[j])
			}
		}
		// add adds the step to set i.
		add := func(i int) {
			if scalar {
				e.moveScalar(Mem{Base: wq, Disp: i * e.size}, wv.AsX())
				for j := range in {
					e.fmaScalar(in[j], wv.AsX(), acc[i][j])
				}
			} else {
				e.broadcast(Mem{Base: wq, Disp: i * e.size}, wv)
				for j := range in {
					e.fma(in[j], wv, acc[i][j])
				}
			}
		}
		next := func() {
			ADDQ(U8(8), sp)
			ADDQ(U32(sets*e.size), wq)
			CMPQ(sp, end)
			JNE(LabelRef(prefix + "Step"))
		}
		// A step that adds to every set (a row block's kernel rows
		// that all its rows take) skips the sets' tests.
		full := s.fullSteps && sets == blockRows && !scalar
		if full {
			CMPB(m.(reg.GPVirtual).As8(), U8(1<<sets-1))
			JEQ(LabelRef(prefix + "Full"))
		}
		for i := range acc {
			skip := fmt.Sprintf("%sSkip%d", prefix, i)
			TESTQ(U32(1<<i), m) // fuses with the jump, unlike BTQ
			JEQ(LabelRef(skip))
			add(i)
			Label(skip)
		}
		next()
		if full {
			JMP(LabelRef(prefix + "StepsDone"))
			Label(prefix + "Full")
			for i := range acc {
				add(i)
			}
			next()
		}
		Label(prefix + "StepsDone")
		q := GP64()
		LEAQ(Mem{Base: outp, Index: x, Scale: uint8(e.size)}, q)
		for i := range acc {
			for j, a := range acc[i] {
				switch {
				case scalar:
					e.moveScalar(a, Mem{Base: q})
				case k != nil && j == len(acc[i])-1:
					e.move(a, k, Mem{Base: q, Disp: j * s.bytes})
				default:
					e.move(a, Mem{Base: q, Disp: j * s.bytes})
				}
			}
			ADDQ(pitch, q)
		}
	}
	// runProg is run's widest pass following prog: per run, the header
	// word's mask picks the run's body (a test per mask bit), and the body
	// takes count steps, each one offset load and the loads and fused
	// multiply-adds of its sets, with 3 instructions of overhead.
	runProg := func(prefix string, v int) {
		acc := make([][]reg.Register, sets)
		for i := range acc {
			for j := range v {
				s.zero(accAll[i][j])
				acc[i] = append(acc[i], accAll[i][j])
			}
		}
		in := inAll[:v]
		pp, h, cnt := sp, m, wq
		Load(Param("prog").Base(), pp)
		LEAQ(Mem{Base: srcp, Index: x, Scale: uint8(e.size)}, srcx)
		rec := 8 + sets*e.size // a step's record: offset, weights
		Label(prefix + "Run")
		MOVQ(Mem{Base: pp}, h)
		ADDQ(U8(8), pp)
		TESTQ(h, h)
		JEQ(LabelRef(prefix + "StepsDone"))
		MOVQ(h, cnt)
		SHRQ(U8(8), cnt)
		// The mask's bits, highest first, down to its body.
		var tree func(mask, bit int)
		tree = func(mask, bit int) {
			if bit < 0 {
				if mask == 0 {
					JMP(LabelRef(prefix + "Run")) // no sets: nothing to add
				} else {
					JMP(LabelRef(fmt.Sprintf("%sBody%d", prefix, mask)))
				}
				return
			}
			set := fmt.Sprintf("%sMask%dBit%d", prefix, mask|1<<bit, bit)
			TESTQ(U32(1<<bit), h)
			JNE(LabelRef(set))
			tree(mask, bit-1)
			Label(set)
			tree(mask|1<<bit, bit-1)
		}
		tree(0, sets-1)
		for mask := 1; mask < 1<<sets; mask++ {
			body := fmt.Sprintf("%sBody%d", prefix, mask)
			Label(body)
			MOVQ(Mem{Base: pp}, p)
			for j := range in {
				e.move(Mem{Base: srcx, Index: p, Scale: 1, Disp: j * s.bytes}, in[j])
			}
			for i := range acc {
				if mask>>i&1 == 0 {
					continue
				}
				e.broadcast(Mem{Base: pp, Disp: 8 + i*e.size}, wv)
				for j := range in {
					e.fma(in[j], wv, acc[i][j])
				}
			}
			ADDQ(U8(rec), pp)
			DECQ(cnt)
			JNE(LabelRef(body))
			JMP(LabelRef(prefix + "Run"))
		}
		Label(prefix + "StepsDone")
		q := GP64()
		LEAQ(Mem{Base: outp, Index: x, Scale: uint8(e.size)}, q)
		for i := range acc {
			for j, a := range acc[i] {
				e.move(a, Mem{Base: q, Disp: j * s.bytes})
			}
			ADDQ(pitch, q)
		}
	}
	if runs {
		// The widest pass follows prog. The last rest outputs, after at
		// least one whole pass: one more pass that ends at n, over rest
		// new outputs and some already computed, which it computes again
		// with the same bits. Fewer outputs than a whole pass take the
		// passes below, on steps and w.
		v := vectors
		prefix := fmt.Sprintf("block%d", v)
		blocks(prefix, n, x, rest, v*lanes, func() { runProg(prefix+"Prog", v) })
		CMPQ(rest, Imm(0))
		JEQ(LabelRef("return"))
		CMPQ(n, U32(v*lanes))
		JL(LabelRef(prefix + "Narrow"))
		MOVQ(n, x)
		SUBQ(U32(v*lanes), x)
		runProg(prefix+"Last", v)
		JMP(LabelRef("return"))
		Label(prefix + "Narrow")
	}
	if s.masked {
		// After the full blocks, fewer than vectors·lanes outputs
		// remain: one pass over the steps with as many vectors as they
		// need, the last one masked.
		v := vectors
		if !runs {
			blocks(fmt.Sprintf("block%d", v), n, x, rest, v*lanes, func() { run(fmt.Sprintf("block%dBody", v), v, nil, false) })
			CMPQ(rest, Imm(0))
			JE(LabelRef("return"))
		}
		maskedTail(rest, lanes, v, func(nv int, k reg.Register) { run(fmt.Sprintf("tail%d", nv), nv, k, false) })
	} else {
		// Without masks, the outputs past the widest blocks run in
		// passes of one fewer vector each, so that a tail keeps as
		// many independent FMA chains as it can.
		widest := vectors
		if runs {
			widest-- // the widest pass is above
		}
		for v := widest; v >= 1; v-- {
			prefix := fmt.Sprintf("block%d", v)
			blocks(prefix, n, x, rest, v*lanes, func() { run(prefix+"Body", v, nil, false) })
		}
		Label("scalar")
		CMPQ(x, n)
		JGE(LabelRef("return"))
		run("scalarBody", 1, nil, true)
		INCQ(x)
		JMP(LabelRef("scalar"))
	}
	ret()
}

// transpose8 generates the interleaving of 8 rows of float32s:
// dst[x·stride+i] = src[i·pitch+x] for i < 8 and x < n rounded down to a
// multiple of 8, as 8×8 transposes in ymm registers (AVX, which every CPU
// with the loops above has): a bank's accumulator sets stored as the
// output's kernel-fastest layout.
func transpose8() {
	name := "transpose8AVX"
	TEXT(name, NOSPLIT, "func(dst []float32, stride int, src []float32, pitch, n int)")
	Doc(name + " is transpose8Go for whole blocks of 8 columns.")
	dp := Load(Param("dst").Base(), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(U8(2), stride) // in bytes
	sp := Load(Param("src").Base(), GP64())
	pitch := Load(Param("pitch"), GP64())
	SHLQ(U8(2), pitch)
	n := Load(Param("n"), GP64())
	x, rest, p, q := GP64(), GP64(), GP64(), GP64()
	XORQ(x, x)
	blocks("block", n, x, rest, 8, func() {
		var r [8]reg.VecVirtual
		LEAQ(Mem{Base: sp, Index: x, Scale: 4}, p)
		for i := range r {
			r[i] = YMM()
			VMOVUPS(Mem{Base: p}, r[i])
			ADDQ(pitch, p)
		}
		// Pairs, then quads, interleaved within 128-bit lanes; then the
		// lanes exchanged: column j of the rows is o[j].
		var t, u, o [8]reg.VecVirtual
		for i := 0; i < 8; i += 2 {
			t[i], t[i+1] = YMM(), YMM()
			VUNPCKLPS(r[i+1], r[i], t[i])
			VUNPCKHPS(r[i+1], r[i], t[i+1])
		}
		for h := 0; h < 8; h += 4 {
			for k := 0; k < 2; k++ {
				u[h+2*k], u[h+2*k+1] = YMM(), YMM()
				VSHUFPS(U8(0x44), t[h+2+k], t[h+k], u[h+2*k])
				VSHUFPS(U8(0xEE), t[h+2+k], t[h+k], u[h+2*k+1])
			}
		}
		for j := 0; j < 4; j++ {
			o[j], o[j+4] = YMM(), YMM()
			VPERM2F128(U8(0x20), u[4+j], u[j], o[j])
			VPERM2F128(U8(0x31), u[4+j], u[j], o[j+4])
		}
		MOVQ(x, q)
		IMULQ(stride, q)
		ADDQ(dp, q)
		for j := range o {
			VMOVUPS(o[j], Mem{Base: q})
			ADDQ(stride, q)
		}
	})
	ret()
}

// dense3 generates a dense 3×3 kernel's taps for BlockRows output rows,
// the nine weights held in registers: for each row i < BlockRows and each
// x < n, out[i·outPitch+x] = the taps (kr, kc) in row-major order, each
// one fused multiply-add from +0, of w[kr·3+kc] and src[(i+kr)·srcPitch +
// x + kc]. Each source vector is loaded once for every row that takes it
// (up to 3), with no weight loads in the loop: half a load per fused
// multiply-add, against about one for the step loops. A pass takes
// s.dense3Vectors vectors a row (enough independent chains to cover the
// FMA latency: 4 rows × 1 ymm with AVX2, 4 × 3 zmm with AVX-512). Outputs
// past the whole passes take one more pass that ends at n (recomputing
// some outputs with the same bits); fewer than a pass, scalars (AVX2) or
// one pass whose last vector is masked (AVX-512).
func dense3(s isa, e elem) {
	name := fmt.Sprintf("dense3%s%s", s.name, e.name)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(out []%s, outPitch, n int, src []%s, srcPitch int, w []%s)", e.gotype, e.gotype, e.gotype))
	Doc(name + " is dense3Go in " + s.name + ".")
	shift := uint8(map[int]int{4: 2, 8: 3}[e.size])
	outp := Load(Param("out").Base(), GP64())
	opitch := Load(Param("outPitch"), GP64())
	SHLQ(U8(shift), opitch)
	n := Load(Param("n"), GP64())
	srcp := Load(Param("src").Base(), GP64())
	spitch := Load(Param("srcPitch"), GP64())
	SHLQ(U8(shift), spitch)
	wp := Load(Param("w").Base(), GP64())
	var w [9]reg.VecVirtual
	for t := range w {
		w[t] = s.vec()
		e.broadcast(Mem{Base: wp, Disp: t * e.size}, w[t])
	}
	vectors := s.dense3Vectors
	var acc [blockRows][]reg.VecVirtual
	for i := range acc {
		for range vectors {
			acc[i] = append(acc[i], s.vec())
		}
	}
	in := make([]reg.VecVirtual, vectors)
	for j := range in {
		in[j] = s.vec()
	}
	lanes := s.bytes / e.size
	x, q, o := GP64(), GP64(), GP64()
	XORQ(x, x)
	// pass computes v vectors of outputs a row at x, the last one under
	// the mask k where k is not nil; or one scalar.
	pass := func(v int, k reg.Register, scalar bool) {
		a := func(i, j int) reg.Register {
			if scalar {
				return acc[i][j].AsX()
			}
			return acc[i][j]
		}
		masked := func(j int) bool { return k != nil && j == v-1 }
		for i := range acc {
			for j := range v {
				if s.bytes == 64 {
					s.zero(a(i, j))
				} else {
					VXORPS(a(i, j), a(i, j), a(i, j))
				}
			}
		}
		LEAQ(Mem{Base: srcp, Index: x, Scale: uint8(e.size)}, q)
		for r := 0; r < blockRows+2; r++ {
			for c := 0; c < 3; c++ {
				for j := range v {
					at := Mem{Base: q, Disp: c*e.size + j*s.bytes}
					switch {
					case scalar:
						e.moveScalar(at, in[j].AsX())
					case masked(j):
						e.loadMasked(at, k, in[j])
					default:
						e.move(at, in[j])
					}
				}
				for i := range acc {
					if kr := r - i; kr >= 0 && kr < 3 {
						for j := range v {
							if scalar {
								e.fmaScalar(in[j].AsX(), w[kr*3+c].AsX(), a(i, j))
							} else {
								e.fma(in[j], w[kr*3+c], a(i, j))
							}
						}
					}
				}
			}
			if r < blockRows+1 {
				ADDQ(spitch, q)
			}
		}
		LEAQ(Mem{Base: outp, Index: x, Scale: uint8(e.size)}, o)
		for i := range acc {
			for j := range v {
				at := Mem{Base: o, Disp: j * s.bytes}
				switch {
				case scalar:
					e.moveScalar(a(i, j), at)
				case masked(j):
					e.move(a(i, j), k, at)
				default:
					e.move(a(i, j), at)
				}
			}
			if i < len(acc)-1 {
				ADDQ(opitch, o)
			}
		}
	}
	rest := GP64()
	step := vectors * lanes
	blocks("vector", n, x, rest, step, func() { pass(vectors, nil, false) })
	CMPQ(rest, Imm(0))
	JEQ(LabelRef("return"))
	narrow := "scalar"
	if s.masked {
		narrow = "narrow"
	}
	CMPQ(n, U32(step))
	JL(LabelRef(narrow))
	MOVQ(n, x)
	SUBQ(U32(step), x)
	pass(vectors, nil, false)
	JMP(LabelRef("return"))
	if s.masked {
		Label(narrow)
		// x is 0 and rest = n < step.
		maskedTail(rest, lanes, vectors, func(nv int, k reg.Register) { pass(nv, k, false) })
	} else {
		Label("scalar")
		CMPQ(x, n)
		JGE(LabelRef("return"))
		pass(1, nil, true)
		INCQ(x)
		JMP(LabelRef("scalar"))
	}
	ret()
}
