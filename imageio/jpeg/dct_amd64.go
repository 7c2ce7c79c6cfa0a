//go:build !noasm && amd64

package jpeg

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asm && go run . -out ../jpeg_amd64.s -stubs ../stubs_amd64.go -pkg jpeg"

// hasAVX2 says whether the CPU runs the AVX2 kernels (jpeg_amd64.s);
// without it the pure-Go twins run.
var hasAVX2 = cpu.X86.HasAVX2

// idct is idctGo: idctAVX2 where the CPU has AVX2 and the block's
// dequantized coefficients are in its range (those of every valid file),
// idctGo otherwise.
func idct(blk *[64]int16, q *[64]int32, dst []byte, off, stride int) {
	if hasAVX2 {
		_ = dst[off+7*stride+7]
		if idctAVX2(blk, q, &dst[off], stride) {
			return
		}
	}
	idctGo(blk, q, dst, off, stride)
}

// fdctQuant is fdctQuantGo, in AVX2 where the CPU has it. The kernel's
// 32-bit lanes hold every value: samples of 8 bits give FDCT outputs
// below 2^15 in magnitude and the C's intermediate sums below 2^31, and
// with baseline tables (entries up to 255, so corr ≤ 1021 and recip <
// 2^16) (|x| + corr) · recip stays below 2^32.
func fdctQuant(src []byte, off, stride int, t *quantTable, ws *[64]int32, out *[64]int16) uint64 {
	if hasAVX2 {
		_ = src[off+7*stride+7]
		return fdctQuantAVX2(&src[off], stride, &t.vec, out)
	}
	return fdctQuantGo(src, off, stride, t, ws, out)
}
