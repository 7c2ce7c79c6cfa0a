//go:build !noasm && arm64

package simd

import (
	"os"
	"strings"
)

// init sets the loops in use to NEON (Advanced SIMD, which every arm64
// CPU has) unless EnvISA names the pure-Go loops. The taps, dense-row and
// axpy loops run NEON over whole vectors and the twin over the last few
// outputs; Block runs NEON loops of its own, each source vector loaded
// once for every set (register blocking).
func init() {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvISA)), ISAGo) {
		return
	}
	isa = ISANEON
	taps32, setTaps32, row32, axpy32 = tapsNEON32, setTapsNEON32, rowNEON32, axpyNEON32
	taps64, setTaps64, row64, axpy64 = tapsNEON64, setTapsNEON64, rowNEON64, axpyNEON64
	block32, bank32, block64, bank64 = blockNEON32, bankNEON32, blockNEON64, bankNEON64
	blockBySets = false
	fmaPeak = func(rounds int) int64 { fmaPeakNEON(rounds); return int64(rounds) * 12 * 4 }
}

// blockNEON32 … bankNEON64 run Block's register-blocked NEON loops over
// the whole vectors of each set and the reference loop (setsGo) over the
// last few outputs.
func blockNEON32(out []float32, outPitch, n int, src []float32, steps []int, w []float32) {
	m := n &^ 3
	blockNEON4F32(out, outPitch, m, src, steps, w)
	if m < n {
		setsGo(BlockRows, out[m:], outPitch, n-m, src[m:], steps, w)
	}
}

func bankNEON32(out []float32, outPitch, n int, src []float32, steps []int, w []float32) {
	m := n &^ 3
	blockNEON8F32(out, outPitch, m, src, steps, w)
	if m < n {
		setsGo(BankSets, out[m:], outPitch, n-m, src[m:], steps, w)
	}
}

func blockNEON64(out []float64, outPitch, n int, src []float64, steps []int, w []float64) {
	m := n &^ 1
	blockNEON4F64(out, outPitch, m, src, steps, w)
	if m < n {
		setsGo(BlockRows, out[m:], outPitch, n-m, src[m:], steps, w)
	}
}

func bankNEON64(out []float64, outPitch, n int, src []float64, steps []int, w []float64) {
	m := n &^ 1
	blockNEON8F64(out, outPitch, m, src, steps, w)
	if m < n {
		setsGo(BankSets, out[m:], outPitch, n-m, src[m:], steps, w)
	}
}

func tapsNEON32(acc, src []float32, offs []int, w []float32)    { neon32(acc, src, offs, w, false) }
func setTapsNEON32(acc, src []float32, offs []int, w []float32) { neon32(acc, src, offs, w, true) }
func tapsNEON64(acc, src []float64, offs []int, w []float64)    { neon64(acc, src, offs, w, false) }
func setTapsNEON64(acc, src []float64, offs []int, w []float64) { neon64(acc, src, offs, w, true) }

// neon32 runs tapsNEONF32 over the whole vectors of acc and the twin over
// the rest (the callers have bounded every offs[t]+len(acc) by len(src)).
func neon32(acc, src []float32, offs []int, w []float32, set bool) {
	n := len(acc) &^ 3
	tapsNEONF32(acc[:n], src, offs, w[:len(offs)], set)
	if n < len(acc) {
		tapsTwin32(acc[n:], src[n:], offs, w, set)
	}
}

func neon64(acc, src []float64, offs []int, w []float64, set bool) {
	n := len(acc) &^ 1
	tapsNEONF64(acc[:n], src, offs, w[:len(offs)], set)
	if n < len(acc) {
		tapsTwin64(acc[n:], src[n:], offs, w, set)
	}
}

// rowNEON32 is Row as taps at offsets 0, 1, 2, … (rowOffs), or the twin
// for a row longer than rowOffs.
func rowNEON32(acc, src, w []float32) {
	if len(w) > len(rowOffs) {
		rowTwin32(acc, src, w)
		return
	}
	neon32(acc, src, rowOffs[:len(w)], w, false)
}

func rowNEON64(acc, src, w []float64) {
	if len(w) > len(rowOffs) {
		rowTwin64(acc, src, w)
		return
	}
	neon64(acc, src, rowOffs[:len(w)], w, false)
}

// axpyNEON32 is Axpy as one tap at offset 0.
func axpyNEON32(y, x []float32, a float32) {
	w := [1]float32{a}
	neon32(y, x, rowOffs[:1], w[:], false)
}

func axpyNEON64(y, x []float64, a float64) {
	w := [1]float64{a}
	neon64(y, x, rowOffs[:1], w[:], false)
}
