//go:build !noasm && amd64

package simd

// asmBlockRuns32 and asmBlockRuns64 list the assembly loops that follow a
// row block's program where the CPU runs them.
func asmBlockRuns32(logf func(string, ...any)) []runsLoop[float32] {
	var l []runsLoop[float32]
	if hasAVX2 {
		l = append(l, runsLoop[float32]{"AVX2", blockRunsAVX2F32})
	} else {
		logf("skipping blockRunsAVX2F32: the CPU lacks AVX2 or FMA")
	}
	if hasAVX512 {
		l = append(l, runsLoop[float32]{"AVX512", blockRunsAVX512F32})
	} else {
		logf("skipping blockRunsAVX512F32: the CPU lacks AVX-512F or BMI2")
	}
	return l
}

func asmBlockRuns64(func(string, ...any)) []runsLoop[float64] {
	var l []runsLoop[float64]
	if hasAVX2 {
		l = append(l, runsLoop[float64]{"AVX2", blockRunsAVX2F64})
	}
	if hasAVX512 {
		l = append(l, runsLoop[float64]{"AVX512", blockRunsAVX512F64})
	}
	return l
}

// asmDense3F32 and asmDense3F64 list the dense 3×3 assembly loops where
// the CPU runs them.
func asmDense3F32(logf func(string, ...any)) []dense3Loop[float32] {
	var l []dense3Loop[float32]
	if hasAVX2 {
		l = append(l, dense3Loop[float32]{"AVX2", dense3AVX2F32})
	} else {
		logf("skipping dense3AVX2F32: the CPU lacks AVX2 or FMA")
	}
	if hasAVX512 {
		l = append(l, dense3Loop[float32]{"AVX512", dense3AVX512F32})
	} else {
		logf("skipping dense3AVX512F32: the CPU lacks AVX-512F or BMI2")
	}
	return l
}

func asmDense3F64(func(string, ...any)) []dense3Loop[float64] {
	var l []dense3Loop[float64]
	if hasAVX2 {
		l = append(l, dense3Loop[float64]{"AVX2", dense3AVX2F64})
	}
	if hasAVX512 {
		l = append(l, dense3Loop[float64]{"AVX512", dense3AVX512F64})
	}
	return l
}
