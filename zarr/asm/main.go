// Command asm generates zarr's SSE2 byte unshuffles (shuffle_amd64.s and
// the Go declarations in stubs_amd64.go) with avo. Run it through go
// generate in the zarr package. It lives in a module of its own so that
// avo is a dependency of the generator only, not of ndconv.
//
// Blosc's byte shuffle stores the first byte of every element, then every
// second byte, …; undoing it interleaves those rows again, which SSE2's
// unpack instructions do sixteen elements at a time. The shuffle itself
// transposes the other way, which SSE2 has no instruction for: an unpack
// of the first half of the bytes with the second is a perfect shuffle,
// which rotates each byte's index left by a bit, so as many rounds as the
// element index has bits (four, for sixteen elements) move byte k of
// element e from k + size·e to 16·k + e. SSE2 is in every amd64
// processor, so there is nothing to detect.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!noasm,amd64")
	unshuffle2()
	unshuffle4()
	shuffle2()
	shuffle4()
	Generate()
}

// unshuffle2 interleaves the two byte rows of 2-byte elements.
func unshuffle2() {
	TEXT("unshuffle2SSE2", NOSPLIT, "func(dst, a, b *byte, n int)")
	Doc("unshuffle2SSE2 writes the 16·n elements of 2 bytes whose low bytes",
		"are at a and high bytes at b (16·n each) to dst (32·n bytes).")
	dst, a, b, n := Load(Param("dst"), GP64()), Load(Param("a"), GP64()), Load(Param("b"), GP64()), Load(Param("n"), GP64())
	Label("loop2")
	CMPQ(n, Imm(0))
	JE(LabelRef("done2"))
	lo, hi := XMM(), XMM()
	MOVOU(Mem{Base: a}, lo)
	MOVOU(Mem{Base: b}, hi)
	t := XMM()
	MOVO(lo, t)
	PUNPCKLBW(hi, t)  // elements 0–7
	PUNPCKHBW(hi, lo) // elements 8–15
	MOVOU(t, Mem{Base: dst})
	MOVOU(lo, Mem{Base: dst, Disp: 16})
	ADDQ(Imm(16), a)
	ADDQ(Imm(16), b)
	ADDQ(Imm(32), dst)
	DECQ(n)
	JMP(LabelRef("loop2"))
	Label("done2")
	RET()
}

// unshuffle4 interleaves the four byte rows of 4-byte elements: bytes
// into pairs (PUNPCK*BW), pairs into elements (PUNPCK*WL).
func unshuffle4() {
	TEXT("unshuffle4SSE2", NOSPLIT, "func(dst, a, b, c, d *byte, n int)")
	Doc("unshuffle4SSE2 writes the 16·n elements of 4 bytes whose bytes 0,",
		"1, 2 and 3 are at a, b, c and d (16·n each) to dst (64·n bytes).")
	dst := Load(Param("dst"), GP64())
	a, b, c, d := Load(Param("a"), GP64()), Load(Param("b"), GP64()), Load(Param("c"), GP64()), Load(Param("d"), GP64())
	n := Load(Param("n"), GP64())
	Label("loop4")
	CMPQ(n, Imm(0))
	JE(LabelRef("done4"))
	va, vb, vc, vd := XMM(), XMM(), XMM(), XMM()
	MOVOU(Mem{Base: a}, va)
	MOVOU(Mem{Base: b}, vb)
	MOVOU(Mem{Base: c}, vc)
	MOVOU(Mem{Base: d}, vd)
	abLo, cdLo := XMM(), XMM()
	MOVO(va, abLo)
	PUNPCKLBW(vb, abLo) // a0 b0 … a7 b7
	PUNPCKHBW(vb, va)   // a8 b8 … a15 b15
	MOVO(vc, cdLo)
	PUNPCKLBW(vd, cdLo) // c0 d0 … c7 d7
	PUNPCKHBW(vd, vc)   // c8 d8 … c15 d15
	e0, e8 := XMM(), XMM()
	MOVO(abLo, e0)
	PUNPCKLWL(cdLo, e0)   // elements 0–3
	PUNPCKHWL(cdLo, abLo) // 4–7
	MOVO(va, e8)
	PUNPCKLWL(vc, e8) // 8–11
	PUNPCKHWL(vc, va) // 12–15
	MOVOU(e0, Mem{Base: dst})
	MOVOU(abLo, Mem{Base: dst, Disp: 16})
	MOVOU(e8, Mem{Base: dst, Disp: 32})
	MOVOU(va, Mem{Base: dst, Disp: 48})
	for _, r := range []Op{a, b, c, d} {
		ADDQ(Imm(16), r)
	}
	ADDQ(Imm(64), dst)
	DECQ(n)
	JMP(LabelRef("loop4"))
	Label("done4")
	RET()
}

// shuffle2 splits 2-byte elements into their low and high bytes' rows:
// four perfect shuffles of 32 bytes.
func shuffle2() {
	TEXT("shuffle2SSE2", NOSPLIT, "func(a, b, src *byte, n int)")
	Doc("shuffle2SSE2 writes the low and high bytes of the 16·n elements of",
		"2 bytes at src (32·n bytes) to a and b (16·n each).")
	a, b, src, n := Load(Param("a"), GP64()), Load(Param("b"), GP64()), Load(Param("src"), GP64()), Load(Param("n"), GP64())
	Label("loopS2")
	CMPQ(n, Imm(0))
	JE(LabelRef("doneS2"))
	v0, v1 := XMM(), XMM()
	MOVOU(Mem{Base: src}, v0)
	MOVOU(Mem{Base: src, Disp: 16}, v1)
	for range 4 {
		t := XMM()
		MOVO(v0, t)
		PUNPCKLBW(v1, t)
		PUNPCKHBW(v1, v0)
		v0, v1 = t, v0
	}
	MOVOU(v0, Mem{Base: a})
	MOVOU(v1, Mem{Base: b})
	ADDQ(Imm(32), src)
	ADDQ(Imm(16), a)
	ADDQ(Imm(16), b)
	DECQ(n)
	JMP(LabelRef("loopS2"))
	Label("doneS2")
	RET()
}

// shuffle4 splits 4-byte elements into their four bytes' rows: four
// perfect shuffles of 64 bytes (the first two vectors' bytes unpacked
// with the last two's).
func shuffle4() {
	TEXT("shuffle4SSE2", NOSPLIT, "func(a, b, c, d, src *byte, n int)")
	Doc("shuffle4SSE2 writes bytes 0, 1, 2 and 3 of the 16·n elements of 4",
		"bytes at src (64·n bytes) to a, b, c and d (16·n each).")
	a, b, c, d := Load(Param("a"), GP64()), Load(Param("b"), GP64()), Load(Param("c"), GP64()), Load(Param("d"), GP64())
	src, n := Load(Param("src"), GP64()), Load(Param("n"), GP64())
	Label("loopS4")
	CMPQ(n, Imm(0))
	JE(LabelRef("doneS4"))
	v := [4]reg.VecVirtual{XMM(), XMM(), XMM(), XMM()}
	for i := range v {
		MOVOU(Mem{Base: src, Disp: 16 * i}, v[i])
	}
	for range 4 {
		// Bytes 0–31 are v0, v1 and 32–63 v2, v3: interleaved, v0 with
		// v2 gives the new 0–31, v1 with v3 the new 32–63.
		t0, t2 := XMM(), XMM()
		MOVO(v[0], t0)
		PUNPCKLBW(v[2], t0)
		PUNPCKHBW(v[2], v[0])
		MOVO(v[1], t2)
		PUNPCKLBW(v[3], t2)
		PUNPCKHBW(v[3], v[1])
		v = [4]reg.VecVirtual{t0, v[0], t2, v[1]}
	}
	for i, r := range []reg.Register{a, b, c, d} {
		MOVOU(v[i], Mem{Base: r})
		ADDQ(Imm(16), r)
	}
	ADDQ(Imm(64), src)
	DECQ(n)
	JMP(LabelRef("loopS4"))
	Label("doneS4")
	RET()
}
