package main

// The colour kernels: the decoder's fused h2v2 fancy upsampling and
// YCbCr → RGB (and the plain 4:4:4 conversion), the encoder's RGB →
// YCbCr and h2v2 downsampling. Each takes 32 pixels (16 chroma samples
// where upsampled) an iteration; the Go dispatchers in the jpeg package
// hand them only whole chunks that lie inside the rows, and do the edges.
//
// The arithmetic is that of jdcolor.c and jccolor.c in 32-bit lanes
// formed by VPMADDWD from pairs of 16-bit samples: a constant too large
// for a signed 16-bit factor is split into a multiple of 2^16 (added
// after the shift, exactly) and a remainder, or, for jccolor.c's ½ =
// 32768/65536, the sample is shifted left by 15.

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	scaleBits = 16
	oneHalf   = 1 << (scaleBits - 1)
)

// fix is libjpeg's FIX(x) at scaleBits (the jpeg package's fix).
func fix(x float64) int32 { return int32(x*(1<<scaleBits) + 0.5) }

// pair is a 32-bit lane holding the 16-bit factors lo (for the sample in
// the lane's low half) and hi.
func pair(lo, hi int32) Mem { return vec(int32(uint32(uint16(lo)) | uint32(uint16(hi))<<16)) }

// words is v in every 16-bit lane.
func words(v int32) Mem { return pair(v, v) }

// shuffle masks: VPSHUFB indexes, the same in both 128-bit lanes.
var rgbInterleaveMem, rgbSplitMem Mem

// colorTables declares the VPSHUFB masks. Interleave mask (j, c) puts
// channel c's samples (16 a lane) where they go in bytes 16j…16j+15 of
// the lane's 48 bytes of R, G, B triples; split mask (j, c) takes from
// those bytes the samples of channel c.
func colorTables() {
	rgbInterleaveMem = GLOBL("jpegRGBInterleave", RODATA|NOPTR)
	for j := range 3 {
		for c := range 3 {
			for l := range 2 {
				for p := range 16 {
					q := 16*j + p
					v := byte(0x80)
					if q%3 == c {
						v = byte(q / 3)
					}
					DATA(32*(3*j+c)+16*l+p, U8(v))
				}
			}
		}
	}
	rgbSplitMem = GLOBL("jpegRGBSplit", RODATA|NOPTR)
	for j := range 3 {
		for c := range 3 {
			for l := range 2 {
				for p := range 16 {
					q := 3*p + c
					v := byte(0x80)
					if q/16 == j {
						v = byte(q % 16)
					}
					DATA(32*(3*j+c)+16*l+p, U8(v))
				}
			}
		}
	}
}

func colorKernels() {
	yccH2V2()
	upH2V1()
	yccToRGB()
	rgbToYCC()
	downH2V2()
}

// ycc32 converts 16 pixels to R, G, B in 16-bit lanes: cb and cr hold the
// chroma samples minus 128 and yw the luma samples, in 16-bit lanes, in
// the same order. The results are Y plus jdcolor.c's table terms:
//
//	crR = (FIX(1.402)·cr + ½) >> 16   = ((26345·cr + ½) >> 16) + cr
//	cbB = (FIX(1.772)·cb + ½) >> 16   = ((−14942·cb + ½) >> 16) + 2·cb
//	G   = (−FIX(0.34414)·cb + ½ − FIX(0.71414)·cr) >> 16
//	    = ((−22554·cb + 18734·cr + ½) >> 16) − cr
func ycc32(cb, cr, yw reg.VecVirtual) (r, g, b reg.VecVirtual) {
	lo, hi := YMM(), YMM()
	VPUNPCKLWD(cr, cb, lo)
	VPUNPCKHWD(cr, cb, hi)
	term := func(k Mem) reg.VecVirtual {
		a, b := YMM(), YMM()
		VPMADDWD(k, lo, a)
		VPMADDWD(k, hi, b)
		VPADDD(vec(oneHalf), a, a)
		VPADDD(vec(oneHalf), b, b)
		VPSRAD(U8(scaleBits), a, a)
		VPSRAD(U8(scaleBits), b, b)
		VPACKSSDW(b, a, a) // back in the order of cb and cr
		return a
	}
	r = term(pair(0, fix(1.40200)-1<<16))
	VPADDW(cr, r, r)
	VPADDW(yw, r, r)
	g = term(pair(-fix(0.34414), -fix(0.71414)+1<<16))
	VPSUBW(cr, g, g)
	VPADDW(yw, g, g)
	b = term(pair(fix(1.77200)-2<<16, 0))
	VPADDW(cb, b, b)
	VPADDW(cb, b, b)
	VPADDW(yw, b, b)
	return r, g, b
}

// storeRGB converts the 32 pixels whose chroma (minus 128) is in cb and
// cr, luma at y, to 96 bytes of RGB at dst. The 16-bit lanes of the P
// vectors hold pixels 0–7 and 16–23, those of the Q vectors 8–15 and
// 24–31, as VPUNPCKLBW and VPUNPCKHBW leave 32 bytes.
func storeRGB(dst, y reg.Register, cbP, crP, cbQ, crQ reg.VecVirtual) {
	yv, zero, yP, yQ := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(Mem{Base: y}, yv)
	VPXOR(zero, zero, zero)
	VPUNPCKLBW(zero, yv, yP)
	VPUNPCKHBW(zero, yv, yQ)
	rP, gP, bP := ycc32(cbP, crP, yP)
	rQ, gQ, bQ := ycc32(cbQ, crQ, yQ)
	// Saturation to 0…255 is jdcolor.c's range limit: Y plus a table
	// term lies within −256…511.
	VPACKUSWB(rQ, rP, rP)
	VPACKUSWB(gQ, gP, gP)
	VPACKUSWB(bQ, bP, bP)
	ch := [3]reg.VecVirtual{rP, gP, bP}
	var x [3]reg.VecVirtual
	for j := range 3 {
		x[j] = YMM()
		VPSHUFB(rgbInterleaveMem.Offset(32*(3*j)), ch[0], x[j])
		for c := 1; c < 3; c++ {
			t := YMM()
			VPSHUFB(rgbInterleaveMem.Offset(32*(3*j+c)), ch[c], t)
			VPOR(t, x[j], x[j])
		}
	}
	// x[j] holds bytes 16j… of pixels 0–15 in its low lane and of pixels
	// 16–31 in its high lane.
	o := YMM()
	VPERM2I128(U8(0x20), x[1], x[0], o)
	VMOVDQU(o, Mem{Base: dst})
	VPERM2I128(U8(0x30), x[0], x[2], o)
	VMOVDQU(o, Mem{Base: dst, Disp: 32})
	VPERM2I128(U8(0x31), x[2], x[1], o)
	VMOVDQU(o, Mem{Base: dst, Disp: 64})
}

// yccH2V2: see yccH2V2AVX2 in the jpeg package.
func yccH2V2() {
	TEXT("yccH2V2AVX2", NOSPLIT, "func(dst, y, bN, bF, rN, rF *byte, n int)")
	Doc("yccH2V2AVX2 is yccH2V2Go on n chunks of 16 chroma samples (32 pixels):",
		"it writes 96·n bytes at dst from 32·n luma samples at y and the chroma",
		"rows' samples −1 … 16·n (bN, bF, rN and rF point at sample 0 of the",
		"chunks, which is not the rows' first).")
	dst := Load(Param("dst"), GP64())
	y := Load(Param("y"), GP64())
	bN := Load(Param("bN"), GP64())
	bF := Load(Param("bF"), GP64())
	rN := Load(Param("rN"), GP64())
	rF := Load(Param("rF"), GP64())
	n := Load(Param("n"), GP64())

	// up returns the h2v2 fancy-upsampled chroma minus 128 of the chunk's
	// 32 pixels, in the order of storeRGB's P and Q vectors.
	up := func(near, far reg.Register) (p, q reg.VecVirtual) {
		colsum := func(off int) reg.VecVirtual {
			a, b, s := YMM(), YMM(), YMM()
			VPMOVZXBW(Mem{Base: near, Disp: off}, a)
			VPMOVZXBW(Mem{Base: far, Disp: off}, b)
			VPADDW(a, a, s)
			VPADDW(a, s, s)
			VPADDW(b, s, s)
			return s
		}
		this, last, next := colsum(0), colsum(-1), colsum(1)
		t3 := YMM()
		VPADDW(this, this, t3)
		VPADDW(this, t3, t3)
		even, odd := YMM(), YMM()
		VPADDW(last, t3, even)
		VPADDW(words(8), even, even)
		VPSRLW(U8(4), even, even)
		VPADDW(next, t3, odd)
		VPADDW(words(7), odd, odd)
		VPSRLW(U8(4), odd, odd)
		p, q = YMM(), YMM()
		VPUNPCKLWD(odd, even, p)
		VPUNPCKHWD(odd, even, q)
		VPSUBW(words(128), p, p)
		VPSUBW(words(128), q, q)
		return p, q
	}

	Label("h2v2loop")
	cbP, cbQ := up(bN, bF)
	crP, crQ := up(rN, rF)
	storeRGB(dst, y, cbP, crP, cbQ, crQ)
	ADDQ(U32(96), dst)
	ADDQ(U32(32), y)
	ADDQ(U32(16), bN)
	ADDQ(U32(16), bF)
	ADDQ(U32(16), rN)
	ADDQ(U32(16), rF)
	DECQ(n)
	JNZ(LabelRef("h2v2loop"))
	VZEROUPPER()
	RET()
}

// upH2V1: see upH2V1AVX2 in the jpeg package.
func upH2V1() {
	TEXT("upH2V1AVX2", NOSPLIT, "func(out, in *byte, n int)")
	Doc("upH2V1AVX2 is upH2V1Go on n chunks of 16 samples: it writes 32·n bytes",
		"at out from the samples −1 … 16·n at in (which is not the row's first).")
	out := Load(Param("out"), GP64())
	in := Load(Param("in"), GP64())
	n := Load(Param("n"), GP64())
	Label("h2v1loop")
	this, last, next := YMM(), YMM(), YMM()
	VPMOVZXBW(Mem{Base: in}, this)
	VPMOVZXBW(Mem{Base: in, Disp: -1}, last)
	VPMOVZXBW(Mem{Base: in, Disp: 1}, next)
	t3 := YMM()
	VPADDW(this, this, t3)
	VPADDW(this, t3, t3)
	even, odd := YMM(), YMM()
	VPADDW(last, t3, even)
	VPADDW(words(1), even, even)
	VPSRLW(U8(2), even, even)
	VPADDW(next, t3, odd)
	VPADDW(words(2), odd, odd)
	VPSRLW(U8(2), odd, odd)
	p, q := YMM(), YMM()
	VPUNPCKLWD(odd, even, p)
	VPUNPCKHWD(odd, even, q)
	VPACKUSWB(q, p, p)
	VMOVDQU(p, Mem{Base: out})
	ADDQ(U32(32), out)
	ADDQ(U32(16), in)
	DECQ(n)
	JNZ(LabelRef("h2v1loop"))
	VZEROUPPER()
	RET()
}

// yccToRGB: see yccToRGBAVX2 in the jpeg package.
func yccToRGB() {
	TEXT("yccToRGBAVX2", NOSPLIT, "func(dst, y, cb, cr *byte, n int)")
	Doc("yccToRGBAVX2 is yccToRGBGo on 32·n pixels.")
	dst := Load(Param("dst"), GP64())
	y := Load(Param("y"), GP64())
	cb := Load(Param("cb"), GP64())
	cr := Load(Param("cr"), GP64())
	n := Load(Param("n"), GP64())
	widen := func(src reg.Register) (p, q reg.VecVirtual) {
		v, zero := YMM(), YMM()
		VMOVDQU(Mem{Base: src}, v)
		VPXOR(zero, zero, zero)
		p, q = YMM(), YMM()
		VPUNPCKLBW(zero, v, p)
		VPUNPCKHBW(zero, v, q)
		VPSUBW(words(128), p, p)
		VPSUBW(words(128), q, q)
		return p, q
	}
	Label("yccloop")
	cbP, cbQ := widen(cb)
	crP, crQ := widen(cr)
	storeRGB(dst, y, cbP, crP, cbQ, crQ)
	ADDQ(U32(96), dst)
	ADDQ(U32(32), y)
	ADDQ(U32(32), cb)
	ADDQ(U32(32), cr)
	DECQ(n)
	JNZ(LabelRef("yccloop"))
	VZEROUPPER()
	RET()
}

// rgbToYCC: see rgbToYCCAVX2 in the jpeg package. With R, G, B in 16-bit
// lanes, paired (R, G) and (B, G):
//
//	Y  = (19595·R + 22086·G) + (7471·B + 16384·G) + ½        (38470 = 22086 + 16384)
//	Cb = (−11059·R − 21709·G) + B·2^15 + 128·2^16 + ½ − 1
//	Cr = (−5329·B − 27439·G) + R·2^15 + 128·2^16 + ½ − 1
//
// each then shifted right by 16 (all three sums are non-negative).
func rgbToYCC() {
	TEXT("rgbToYCCAVX2", NOSPLIT, "func(y, cb, cr, src *byte, n int)")
	Doc("rgbToYCCAVX2 is rgbToYCCGo on 32·n pixels.")
	y := Load(Param("y"), GP64())
	cb := Load(Param("cb"), GP64())
	cr := Load(Param("cr"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	fyG2 := int32(16384)
	Label("rgbloop")
	// x[j]: bytes 16j… of pixels 0–15 (low lane) and of 16–31 (high).
	var x [3]reg.VecVirtual
	for j := range 3 {
		x[j] = YMM()
		VMOVDQU(Mem{Base: src, Disp: 16 * j}, x[j].AsX())
		VINSERTI128(U8(1), Mem{Base: src, Disp: 48 + 16*j}, x[j], x[j])
	}
	var ch [3]reg.VecVirtual
	for c := range 3 {
		ch[c] = YMM()
		VPSHUFB(rgbSplitMem.Offset(32*c), x[0], ch[c])
		for j := 1; j < 3; j++ {
			t := YMM()
			VPSHUFB(rgbSplitMem.Offset(32*(3*j+c)), x[j], t)
			VPOR(t, ch[c], ch[c])
		}
	}
	zero := YMM()
	VPXOR(zero, zero, zero)
	var out [3][2]reg.VecVirtual // Y, Cb, Cr of the P and Q halves, 16 bits
	for h := range 2 {
		unpack := VPUNPCKLBW
		if h == 1 {
			unpack = VPUNPCKHBW
		}
		var w [3]reg.VecVirtual
		for c := range 3 {
			w[c] = YMM()
			unpack(zero, ch[c], w[c])
		}
		var sums [3][2]reg.VecVirtual
		for k := range 2 {
			wunpack := VPUNPCKLWD
			if k == 1 {
				wunpack = VPUNPCKHWD
			}
			rg, bg := YMM(), YMM()
			wunpack(w[1], w[0], rg)
			wunpack(w[1], w[2], bg)
			// Y.
			s, t := YMM(), YMM()
			VPMADDWD(pair(fix(0.29900), fix(0.58700)-fyG2), rg, s)
			VPMADDWD(pair(fix(0.11400), fyG2), bg, t)
			VPADDD(t, s, s)
			VPADDD(vec(oneHalf), s, s)
			VPSRLD(U8(scaleBits), s, s)
			sums[0][k] = s
			// Cb and Cr: the sample in the low half of rg or bg, times
			// 2^15, is the lane shifted left 16 and right 1.
			const off = 128<<scaleBits + oneHalf - 1
			for c, a := range []struct {
				mul, shifted reg.VecVirtual
				k            Mem
			}{{rg, bg, pair(-fix(0.16874), -fix(0.33126))}, {bg, rg, pair(-fix(0.08131), -fix(0.41869))}} {
				s, t := YMM(), YMM()
				VPMADDWD(a.k, a.mul, s)
				VPSLLD(U8(16), a.shifted, t)
				VPSRLD(U8(1), t, t)
				VPADDD(t, s, s)
				VPADDD(vec(off), s, s)
				VPSRLD(U8(scaleBits), s, s)
				sums[1+c][k] = s
			}
		}
		for c := range 3 {
			out[c][h] = YMM()
			VPACKSSDW(sums[c][1], sums[c][0], out[c][h])
		}
	}
	for c, p := range []reg.Register{y, cb, cr} {
		VPACKUSWB(out[c][1], out[c][0], out[c][0])
		VMOVDQU(out[c][0], Mem{Base: p})
		ADDQ(U32(32), p)
	}
	ADDQ(U32(96), src)
	DECQ(n)
	JNZ(LabelRef("rgbloop"))
	VZEROUPPER()
	RET()
}

// downH2V2: see downH2V2AVX2 in the jpeg package.
func downH2V2() {
	TEXT("downH2V2AVX2", NOSPLIT, "func(out, in0, in1 *byte, n int)")
	Doc("downH2V2AVX2 is downH2V2Go on n chunks of 32 outputs (64 samples of each",
		"row).")
	out := Load(Param("out"), GP64())
	in0 := Load(Param("in0"), GP64())
	in1 := Load(Param("in1"), GP64())
	n := Load(Param("n"), GP64())
	Label("downloop")
	var s [2]reg.VecVirtual
	for h := range 2 {
		a, b := YMM(), YMM()
		// VPMADDUBSW by ones: the sums of adjacent samples, in 16 bits.
		VMOVDQU(Mem{Base: in0, Disp: 32 * h}, a)
		VPMADDUBSW(vec(0x01010101), a, a)
		VMOVDQU(Mem{Base: in1, Disp: 32 * h}, b)
		VPMADDUBSW(vec(0x01010101), b, b)
		VPADDW(b, a, a)
		VPADDW(pair(1, 2), a, a)
		VPSRLW(U8(2), a, a)
		s[h] = a
	}
	VPACKUSWB(s[1], s[0], s[0])
	VPERMQ(U8(0xd8), s[0], s[0])
	VMOVDQU(s[0], Mem{Base: out})
	ADDQ(U32(32), out)
	ADDQ(U32(64), in0)
	ADDQ(U32(64), in1)
	DECQ(n)
	JNZ(LabelRef("downloop"))
	VZEROUPPER()
	RET()
}
