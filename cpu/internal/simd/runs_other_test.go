//go:build noasm || !amd64

package simd

// Builds without amd64 assembly have no loop that follows a row block's
// program but the pure-Go reference.
func asmBlockRuns32(func(string, ...any)) []runsLoop[float32] { return nil }

func asmBlockRuns64(func(string, ...any)) []runsLoop[float64] { return nil }

func asmDense3F32(func(string, ...any)) []dense3Loop[float32] { return nil }

func asmDense3F64(func(string, ...any)) []dense3Loop[float64] { return nil }
