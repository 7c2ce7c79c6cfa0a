//go:build !noasm && amd64

package simd

// byISA keeps the versions of one loop for the instruction sets this CPU
// runs, AVX2 (with FMA) and AVX-512F (with BMI2), and says which it skips.
func byISA[L any](logf func(string, ...any), loop string, avx2, avx512 L) []L {
	var l []L
	if hasAVX2 {
		l = append(l, avx2)
	} else {
		logf("skipping %sAVX2: the CPU lacks AVX2 or FMA", loop)
	}
	if hasAVX512 {
		l = append(l, avx512)
	} else {
		logf("skipping %sAVX512: the CPU lacks AVX-512F or BMI2", loop)
	}
	return l
}

// asmBlockRuns32 and asmBlockRuns64 list the assembly loops that follow a
// row block's program where the CPU runs them.
func asmBlockRuns32(logf func(string, ...any)) []runsLoop[float32] {
	return byISA(logf, "blockRuns", runsLoop[float32]{"AVX2", blockRunsAVX2F32}, runsLoop[float32]{"AVX512", blockRunsAVX512F32})
}

func asmBlockRuns64(logf func(string, ...any)) []runsLoop[float64] {
	return byISA(logf, "blockRuns", runsLoop[float64]{"AVX2", blockRunsAVX2F64}, runsLoop[float64]{"AVX512", blockRunsAVX512F64})
}

// asmDense3F32 and asmDense3F64 list the dense 3×3 assembly loops where
// the CPU runs them.
func asmDense3F32(logf func(string, ...any)) []dense3Loop[float32] {
	return byISA(logf, "dense3", dense3Loop[float32]{"AVX2", dense3AVX2F32}, dense3Loop[float32]{"AVX512", dense3AVX512F32})
}

func asmDense3F64(logf func(string, ...any)) []dense3Loop[float64] {
	return byISA(logf, "dense3", dense3Loop[float64]{"AVX2", dense3AVX2F64}, dense3Loop[float64]{"AVX512", dense3AVX512F64})
}
