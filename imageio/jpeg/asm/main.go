// Command asm generates the JPEG codec's AVX2 kernels (jpeg_amd64.s and
// the Go declarations in stubs_amd64.go) with avo. Run it through go
// generate in the jpeg package. It lives in a module of its own so that
// avo is a dependency of the generator only, not of ndconv.
//
// The kernels compute what the pure-Go twins compute, bit for bit: the
// same integer constants, the same order of additions, the same rounding
// shifts, in 32-bit lanes (eight per vector). Each doc comment in the
// jpeg package says for which inputs 32 bits hold every value the twin
// computes in 64; the islow IDCT checks its inputs and declines the
// blocks outside that range, which the twin then transforms.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The constants of jidctint.c and jfdctint.c (CONST_BITS = 13).
const (
	constBits = 13
	pass1Bits = 2

	fix0_298631336 = 2446
	fix0_390180644 = 3196
	fix0_541196100 = 4433
	fix0_765366865 = 6270
	fix0_899976223 = 7373
	fix1_175875602 = 9633
	fix1_501321110 = 12299
	fix1_847759065 = 15137
	fix1_961570560 = 16069
	fix2_053119869 = 16819
	fix2_562915447 = 20995
	fix3_072711026 = 25172
)

// idctBound is the bound on the dequantized coefficients below which the
// IDCT's first pass fits in 32 bits (the Go tests check the margin).
const idctBound = 1 << 15

// consts is the table of vector constants: each value repeated in eight
// 32-bit lanes, at the offset vec returns.
var (
	consts     Mem
	constIndex = map[int32]int{}
	constList  []int32
)

func vec(v int32) Mem {
	i, ok := constIndex[v]
	if !ok {
		i = len(constList)
		constIndex[v] = i
		constList = append(constList, v)
	}
	return consts.Offset(32 * i)
}

func main() {
	ConstraintExpr("!noasm,amd64")
	// The table of constants is declared after the kernels, which name
	// its entries as they use them.
	consts = NewDataAddr(Symbol{Name: "jpegConsts", Static: true}, 0)
	permRowsMem = GLOBL("jpegPermRows", RODATA|NOPTR)
	for i, v := range []int32{0, 4, 1, 5, 2, 6, 3, 7} {
		DATA(4*i, I32(v))
	}
	zigzagMem = GLOBL("jpegZigzag", RODATA|NOPTR)
	for i, v := range zigzagOrder {
		DATA(4*i, I32(v))
	}
	colorTables()
	idct()
	fdctQuant()
	colorKernels()
	GLOBL("jpegConsts", RODATA|NOPTR)
	for i, v := range constList {
		for l := range 8 {
			DATA(32*i+4*l, I32(v))
		}
	}
	Generate()
}

// add, sub and the like return a new register with the result.
func add(a, b reg.VecVirtual) reg.VecVirtual { r := YMM(); VPADDD(b, a, r); return r }
func sub(a, b reg.VecVirtual) reg.VecVirtual { r := YMM(); VPSUBD(b, a, r); return r }
func mul(a reg.VecVirtual, c int32) reg.VecVirtual {
	r := YMM()
	VPMULLD(vec(c), a, r)
	return r
}

// transpose returns the 8×8 transpose of the rows of 32-bit lanes in r.
func transpose(r [8]reg.VecVirtual) [8]reg.VecVirtual {
	var t, u, o [8]reg.VecVirtual
	for i := 0; i < 8; i += 2 {
		t[i], t[i+1] = YMM(), YMM()
		VPUNPCKLDQ(r[i+1], r[i], t[i])
		VPUNPCKHDQ(r[i+1], r[i], t[i+1])
	}
	// t[0]: r0[0] r1[0] r0[1] r1[1] | …4,5; t[1]: r0[2] r1[2] r0[3] r1[3] | …6,7.
	for _, b := range []int{0, 4} {
		for j := range 2 {
			u[b+2*j], u[b+2*j+1] = YMM(), YMM()
			VPUNPCKLQDQ(t[b+2+j], t[b+j], u[b+2*j])
			VPUNPCKHQDQ(t[b+2+j], t[b+j], u[b+2*j+1])
		}
	}
	// u[0..3] (rows 0–3) hold columns 0, 1, 2, 3 in their low lanes and
	// 4, 5, 6, 7 in their high lanes; u[4..7] the same for rows 4–7.
	for c := range 4 {
		o[c], o[c+4] = YMM(), YMM()
		VPERM2I128(U8(0x20), u[4+c], u[c], o[c])
		VPERM2I128(U8(0x31), u[4+c], u[c], o[c+4])
	}
	return o
}

// idctPass is one 1-D pass of jpeg_idct_islow over eight vectors of
// inputs x (lane by lane), returning the eight outputs before descaling,
// with the rounding constant added.
func idctPass(x func(int) reg.VecVirtual, round int32) [8]reg.VecVirtual {
	// Even part.
	z2, z3 := x(2), x(6)
	z1 := mul(add(z2, z3), fix0_541196100)
	tmp2 := add(z1, mul(z3, -fix1_847759065))
	tmp3 := add(z1, mul(z2, fix0_765366865))
	z2, z3 = x(0), x(4)
	tmp0, tmp1 := add(z2, z3), sub(z2, z3)
	VPSLLD(U8(constBits), tmp0, tmp0)
	VPSLLD(U8(constBits), tmp1, tmp1)
	VPADDD(vec(round), tmp0, tmp0) // the rounding, in every output
	VPADDD(vec(round), tmp1, tmp1)
	tmp10, tmp13 := add(tmp0, tmp3), sub(tmp0, tmp3)
	tmp11, tmp12 := add(tmp1, tmp2), sub(tmp1, tmp2)

	// Odd part.
	t0, t1, t2, t3 := x(7), x(5), x(3), x(1)
	z3, z4 := add(t0, t2), add(t1, t3)
	z5 := mul(add(z3, z4), fix1_175875602)
	z3 = add(mul(z3, -fix1_961570560), z5)
	z4 = add(mul(z4, -fix0_390180644), z5)
	z1 = mul(add(t0, t3), -fix0_899976223)
	z2 = mul(add(t1, t2), -fix2_562915447)
	t0 = add(mul(t0, fix0_298631336), add(z1, z3))
	t1 = add(mul(t1, fix2_053119869), add(z2, z4))
	t2 = add(mul(t2, fix3_072711026), add(z2, z3))
	t3 = add(mul(t3, fix1_501321110), add(z1, z4))

	return [8]reg.VecVirtual{
		add(tmp10, t3), add(tmp11, t2), add(tmp12, t1), add(tmp13, t0),
		sub(tmp13, t0), sub(tmp12, t1), sub(tmp11, t2), sub(tmp10, t3),
	}
}

// idct: see idctAVX2 in the jpeg package.
func idct() {
	TEXT("idctAVX2", NOSPLIT, "func(blk *[64]int16, q *[64]int32, dst *byte, stride int) bool")
	Doc("idctAVX2 is idctGo in AVX2 for blocks whose dequantized coefficients",
		fmt.Sprintf("are all below %d in magnitude; it returns false, having written", idctBound),
		"nothing, for any other block.")
	blk := Load(Param("blk"), GP64())
	q := Load(Param("q"), GP64())

	// Pass 1: columns, a row of eight columns in each vector.
	big := YMM()
	VPXOR(big, big, big)
	deq := func(r int) reg.VecVirtual {
		v := YMM()
		VPMOVSXWD(Mem{Base: blk, Disp: 16 * r}, v)
		VPMULLD(Mem{Base: q, Disp: 32 * r}, v, v)
		a := YMM()
		VPABSD(v, a)
		VPOR(a, big, big)
		return v
	}
	ws := idctPass(deq, 1<<(constBits-pass1Bits-1))
	VPTEST(vec(^int32(idctBound-1)), big)
	JNZ(LabelRef("decline"))
	for i := range ws {
		VPSRAD(U8(constBits-pass1Bits), ws[i], ws[i])
	}

	// Pass 2: rows, after a transpose: vector k holds ws[8r+k] for r = 0…7.
	col := transpose(ws)
	out := idctPass(func(k int) reg.VecVirtual { return col[k] }, 1<<(constBits+pass1Bits+3-1))
	// The range limit: bits 18…27 of the sum, sign-extended, plus 128,
	// saturated to 0…255 (idctLimit).
	for i := range out {
		VPSLLD(U8(32-(constBits+pass1Bits+3+10)), out[i], out[i])
		VPSRAD(U8(32-10), out[i], out[i])
		VPADDD(vec(128), out[i], out[i])
	}
	rows := transpose(out)
	perm := YMM()
	VMOVDQU(permRows(), perm)
	dst := Load(Param("dst"), GP64())
	stride := Load(Param("stride"), GP64())
	s3 := GP64()
	LEAQ(Mem{Base: stride, Index: stride, Scale: 2}, s3)
	for h := range 2 {
		a, b := YMM(), YMM()
		VPACKSSDW(rows[4*h+1], rows[4*h], a)
		VPACKSSDW(rows[4*h+3], rows[4*h+2], b)
		VPACKUSWB(b, a, a)
		// a: rows 4h…4h+3, columns 0–3 in the low lane, 4–7 in the high.
		VPERMD(a, perm, a)
		lo, hi := a.AsX(), XMM()
		VEXTRACTI128(U8(1), a, hi)
		VMOVQ(lo, Mem{Base: dst})
		VMOVHPS(lo, Mem{Base: dst, Index: stride, Scale: 1})
		VMOVQ(hi, Mem{Base: dst, Index: stride, Scale: 2})
		VMOVHPS(hi, Mem{Base: dst, Index: s3, Scale: 1})
		if h == 0 {
			LEAQ(Mem{Base: dst, Index: stride, Scale: 4}, dst)
		}
	}
	VZEROUPPER()
	MOVB(U8(1), NewParamAddr("ret", 32))
	RET()
	Label("decline")
	VZEROUPPER()
	MOVB(U8(0), NewParamAddr("ret", 32))
	RET()
}

// permRowsMem is VPERMD's index putting a row's two halves side by side;
// zigzagMem holds zigzagOrder.
var permRowsMem, zigzagMem Mem

func permRows() Mem { return permRowsMem }

// zigzag is the natural index of each coefficient in zigzag order.
var zigzagOrder = [64]int32{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
}

func zigzag() Mem { return zigzagMem }

// fdctPass is one 1-D pass of jpeg_fdct_islow over eight vectors p (lane
// by lane). The outputs 0 and 4 are (x + round0) >> shift0 (or x <<
// −shift0 where shift0 < 0), the others (x + round) >> shift.
func fdctPass(p [8]reg.VecVirtual, round0 int32, shift0 int, round int32, shift int) [8]reg.VecVirtual {
	tmp0, tmp7 := add(p[0], p[7]), sub(p[0], p[7])
	tmp1, tmp6 := add(p[1], p[6]), sub(p[1], p[6])
	tmp2, tmp5 := add(p[2], p[5]), sub(p[2], p[5])
	tmp3, tmp4 := add(p[3], p[4]), sub(p[3], p[4])

	tmp10, tmp13 := add(tmp0, tmp3), sub(tmp0, tmp3)
	tmp11, tmp12 := add(tmp1, tmp2), sub(tmp1, tmp2)

	var d [8]reg.VecVirtual
	d[0], d[4] = add(tmp10, tmp11), sub(tmp10, tmp11)
	for _, i := range []int{0, 4} {
		if shift0 < 0 {
			VPSLLD(U8(-shift0), d[i], d[i])
		} else {
			VPADDD(vec(round0), d[i], d[i])
			VPSRAD(U8(shift0), d[i], d[i])
		}
	}
	z1 := add(mul(add(tmp12, tmp13), fix0_541196100), nil0(round))
	d[2] = add(z1, mul(tmp13, fix0_765366865))
	d[6] = add(z1, mul(tmp12, -fix1_847759065))

	z1 = add(tmp4, tmp7)
	z2 := add(tmp5, tmp6)
	z3 := add(tmp4, tmp6)
	z4 := add(tmp5, tmp7)
	z5 := add(mul(add(z3, z4), fix1_175875602), nil0(round))
	tmp4 = mul(tmp4, fix0_298631336)
	tmp5 = mul(tmp5, fix2_053119869)
	tmp6 = mul(tmp6, fix3_072711026)
	tmp7 = mul(tmp7, fix1_501321110)
	z1 = mul(z1, -fix0_899976223)
	z2 = mul(z2, -fix2_562915447)
	z3 = add(mul(z3, -fix1_961570560), z5)
	z4 = add(mul(z4, -fix0_390180644), z5)
	d[7] = add(tmp4, add(z1, z3))
	d[5] = add(tmp5, add(z2, z4))
	d[3] = add(tmp6, add(z2, z3))
	d[1] = add(tmp7, add(z1, z4))
	for _, i := range []int{1, 2, 3, 5, 6, 7} {
		VPSRAD(U8(shift), d[i], d[i])
	}
	return d
}

// nil0 loads a constant vector into a register.
func nil0(v int32) reg.VecVirtual {
	r := YMM()
	VMOVDQU(vec(v), r)
	return r
}

// fdctQuant: see fdctQuantAVX2 in the jpeg package.
func fdctQuant() {
	TEXT("fdctQuantAVX2", NOSPLIT, "func(src *byte, stride int, t *[3][64]uint32, out *[64]int16) uint64")
	Doc("fdctQuantAVX2 is fdctQuantGo in AVX2; t holds the divisors' recip, corr",
		"and shift (the C's shift + 16) in zigzag order.")
	src := Load(Param("src"), GP64())
	stride := Load(Param("stride"), GP64())
	var r [8]reg.VecVirtual
	for i := range r {
		r[i] = YMM()
		VPMOVZXBD(Mem{Base: src}, r[i])
		VPSUBD(vec(128), r[i], r[i])
		if i < 7 {
			ADDQ(stride, src)
		}
	}
	// Pass 1: rows, after a transpose: vector k holds sample k of each row.
	ws := fdctPass(transpose(r), 0, -pass1Bits, 1<<(constBits-pass1Bits-1), constBits-pass1Bits)
	// Pass 2: columns, vector k now holds row k of the workspace.
	out := fdctPass(transpose(ws), 1<<(pass1Bits-1), pass1Bits, 1<<(constBits+pass1Bits-1), constBits+pass1Bits)

	// Quantization, in zigzag order: the coefficients are gathered from a
	// copy on the stack.
	buf := AllocLocal(256)
	for i := range out {
		VMOVDQU(out[i], buf.Offset(32*i))
	}
	base := GP64()
	LEAQ(buf, base)
	t := Load(Param("t"), GP64())
	o := Load(Param("out"), GP64())
	mask := GP64()
	XORQ(mask, mask)
	zero := YMM()
	VPXOR(zero, zero, zero)
	var prev reg.VecVirtual
	for g := range 8 {
		idx, all, v := YMM(), YMM(), YMM()
		VMOVDQU(zigzag().Offset(32*g), idx)
		VPCMPEQD(all, all, all)
		VPXOR(v, v, v)
		VPGATHERDD(all, Mem{Base: base, Index: idx, Scale: 4}, v)
		neg, a := YMM(), YMM()
		VPSRAD(U8(31), v, neg)
		VPXOR(neg, v, a)
		VPSUBD(neg, a, a)
		VPADDD(Mem{Base: t, Disp: 256 + 32*g}, a, a)
		VPMULLD(Mem{Base: t, Disp: 32 * g}, a, a)
		VPSRLVD(Mem{Base: t, Disp: 512 + 32*g}, a, a)
		VPXOR(neg, a, a)
		VPSUBD(neg, a, a)
		eq := YMM()
		VPCMPEQD(zero, a, eq)
		bits := GP64()
		VMOVMSKPS(eq, bits.As32())
		if g > 0 {
			SHLQ(U8(8*g), bits)
		}
		ORQ(bits, mask)
		if g%2 == 0 {
			prev = a
			continue
		}
		VPACKSSDW(a, prev, prev)
		VPERMQ(U8(0xd8), prev, prev)
		VMOVDQU(prev, Mem{Base: o, Disp: 32 * (g / 2)})
	}
	NOTQ(mask)
	Store(mask, ReturnIndex(0))
	VZEROUPPER()
	RET()
}
