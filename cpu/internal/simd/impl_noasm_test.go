//go:build noasm || !amd64

package simd

func asmKernels32(logf func(string, ...any)) []kernels[float32] {
	logf("no assembly in this build")
	return nil
}

func asmKernels64(func(string, ...any)) []kernels[float64] { return nil }

func asmConversions(func(string, ...any)) []conversions { return nil }
