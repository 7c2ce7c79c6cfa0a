//go:build !noasm && amd64

package simd

// asmBlockRuns32 and asmBlockRuns64 list the assembly loops that follow a
// row block's program where the CPU runs them.
func asmBlockRuns32(logf func(string, ...any)) []runsLoop[float32] {
	if !hasAVX2 {
		logf("skipping blockRunsAVX2F32: the CPU lacks AVX2 or FMA")
		return nil
	}
	return []runsLoop[float32]{{"AVX2", blockRunsAVX2F32}}
}

func asmBlockRuns64(func(string, ...any)) []runsLoop[float64] {
	if !hasAVX2 {
		return nil
	}
	return []runsLoop[float64]{{"AVX2", blockRunsAVX2F64}}
}
