//go:build noasm || !(amd64 || arm64)

package simd

import "testing"

func asmKernels32(logf func(string, ...any)) []kernels[float32] {
	logf("no assembly in this build")
	return nil
}

func asmKernels64(func(string, ...any)) []kernels[float64] { return nil }

func asmConversions(func(string, ...any)) []conversions { return nil }

func asmTranspose8(func(string, ...any)) func(dst []float32, stride int, src []float32, pitch, n int) {
	return nil
}

// TestISAInUse checks that a build without assembly runs the pure-Go
// loops whatever EnvISA says.
func TestISAInUse(t *testing.T) {
	if ISA() != ISAGo {
		t.Errorf("ISA %s in a build without assembly", ISA())
	}
}
