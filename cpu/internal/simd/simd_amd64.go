//go:build !noasm && amd64

package simd

import (
	"os"

	"golang.org/x/sys/cpu"
)

// The instruction sets this CPU runs: AVX-512F (with BMI2 for the tail
// masks), AVX2 with FMA. The tests run the assembly of each the CPU has,
// whichever one the dispatch uses.
var (
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasBMI2
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// init sets the loops in use to the widest instruction set the CPU has and
// EnvISA allows; with neither, the pure-Go loops stay.
func init() {
	isa = chooseISA(os.Getenv(EnvISA), hasAVX512, hasAVX2)
	if isa != ISAGo {
		transpose8 = transpose8AVX // AVX only, which both sets imply
		blockBySets = false
	}
	switch isa {
	case ISAAVX512:
		taps32, setTaps32, row32, axpy32 = tapsAVX512F32, setTapsAVX512F32, rowAVX512F32, axpyAVX512F32
		taps64, setTaps64, row64, axpy64 = tapsAVX512F64, setTapsAVX512F64, rowAVX512F64, axpyAVX512F64
		block32, block64 = blockAVX512F32, blockAVX512F64
		blockRuns32, blockRuns64 = blockRunsAVX512F32, blockRunsAVX512F64
		dense3F32, dense3F64 = dense3AVX512F32, dense3AVX512F64
		bank32, bank64 = bankAVX512F32, bankAVX512F64
		loadUint8, loadUint16 = loadUint8AVX512, loadUint16AVX512
		storeUint8, storeUint16 = storeUint8AVX512, storeUint16AVX512
		fmaPeak = func(rounds int) int64 { fmaPeakAVX512(rounds); return int64(rounds) * 12 * 16 }
	case ISAAVX2:
		taps32, setTaps32, row32, axpy32 = tapsAVX2F32, setTapsAVX2F32, rowAVX2F32, axpyAVX2F32
		taps64, setTaps64, row64, axpy64 = tapsAVX2F64, setTapsAVX2F64, rowAVX2F64, axpyAVX2F64
		block32, block64 = blockAVX2F32, blockAVX2F64
		blockRuns32, blockRuns64 = blockRunsAVX2F32, blockRunsAVX2F64
		dense3F32, dense3F64 = dense3AVX2F32, dense3AVX2F64
		bank32, bank64 = bankAVX2F32, bankAVX2F64
		loadUint8, loadUint16 = loadUint8AVX2, loadUint16AVX2
		storeUint8, storeUint16 = storeUint8AVX2, storeUint16AVX2
		fmaPeak = func(rounds int) int64 { fmaPeakAVX2(rounds); return int64(rounds) * 12 * 8 }
	}
}
