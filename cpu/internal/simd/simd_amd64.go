//go:build !noasm && amd64

package simd

import "golang.org/x/sys/cpu"

// The widest instruction set this CPU runs: AVX-512F (with BMI2 for the
// tail masks), else AVX2 with FMA, else none (the pure-Go loops).
var (
	useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasBMI2
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

func taps32(acc, src []float32, offs []int, w []float32) {
	switch {
	case useAVX512:
		tapsAVX512F32(acc, src, offs, w)
	case useAVX2:
		tapsAVX2F32(acc, src, offs, w)
	default:
		tapsGo(acc, src, offs, w)
	}
}

func taps64(acc, src []float64, offs []int, w []float64) {
	switch {
	case useAVX512:
		tapsAVX512F64(acc, src, offs, w)
	case useAVX2:
		tapsAVX2F64(acc, src, offs, w)
	default:
		tapsGo(acc, src, offs, w)
	}
}

func row32(acc, src, w []float32) {
	switch {
	case useAVX512:
		rowAVX512F32(acc, src, w)
	case useAVX2:
		rowAVX2F32(acc, src, w)
	default:
		rowGo(acc, src, w)
	}
}

func row64(acc, src, w []float64) {
	switch {
	case useAVX512:
		rowAVX512F64(acc, src, w)
	case useAVX2:
		rowAVX2F64(acc, src, w)
	default:
		rowGo(acc, src, w)
	}
}

func axpy32(y, x []float32, a float32) {
	switch {
	case useAVX512:
		axpyAVX512F32(y, x, a)
	case useAVX2:
		axpyAVX2F32(y, x, a)
	default:
		axpyGo(y, x, a)
	}
}

func axpy64(y, x []float64, a float64) {
	switch {
	case useAVX512:
		axpyAVX512F64(y, x, a)
	case useAVX2:
		axpyAVX2F64(y, x, a)
	default:
		axpyGo(y, x, a)
	}
}

func setTaps32(acc, src []float32, offs []int, w []float32) {
	switch {
	case useAVX512:
		setTapsAVX512F32(acc, src, offs, w)
	case useAVX2:
		setTapsAVX2F32(acc, src, offs, w)
	default:
		setTapsGo(acc, src, offs, w)
	}
}

func setTaps64(acc, src []float64, offs []int, w []float64) {
	switch {
	case useAVX512:
		setTapsAVX512F64(acc, src, offs, w)
	case useAVX2:
		setTapsAVX2F64(acc, src, offs, w)
	default:
		setTapsGo(acc, src, offs, w)
	}
}

func loadUint8(dst []float32, src []uint8) {
	switch {
	case useAVX512:
		loadUint8AVX512(dst, src)
	case useAVX2:
		loadUint8AVX2(dst, src)
	default:
		loadUint8Go(dst, src)
	}
}

func loadUint16(dst []float32, src []uint16) {
	switch {
	case useAVX512:
		loadUint16AVX512(dst, src)
	case useAVX2:
		loadUint16AVX2(dst, src)
	default:
		loadUint16Go(dst, src)
	}
}

func storeUint8(dst []uint8, src []float32) {
	switch {
	case useAVX512:
		storeUint8AVX512(dst, src)
	case useAVX2:
		storeUint8AVX2(dst, src)
	default:
		storeUint8Go(dst, src)
	}
}

func storeUint16(dst []uint16, src []float32) {
	switch {
	case useAVX512:
		storeUint16AVX512(dst, src)
	case useAVX2:
		storeUint16AVX2(dst, src)
	default:
		storeUint16Go(dst, src)
	}
}

func fmaPeak(rounds int) int64 {
	switch {
	case useAVX512:
		fmaPeakAVX512(rounds)
		return int64(rounds) * 12 * 16
	case useAVX2:
		fmaPeakAVX2(rounds)
		return int64(rounds) * 12 * 8
	default:
		return fmaPeakGo(rounds)
	}
}
