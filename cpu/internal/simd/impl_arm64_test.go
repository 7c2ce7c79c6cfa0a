//go:build !noasm && arm64

package simd

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// asmKernels32 lists the NEON loops (every arm64 CPU has them).
func asmKernels32(func(string, ...any)) []kernels[float32] {
	return []kernels[float32]{{"NEON", tapsNEON32, setTapsNEON32, rowNEON32, axpyNEON32, blockNEON32, bankNEON32}}
}

func asmKernels64(func(string, ...any)) []kernels[float64] {
	return []kernels[float64]{{"NEON", tapsNEON64, setTapsNEON64, rowNEON64, axpyNEON64, blockNEON64, bankNEON64}}
}

// The integer conversions and the transpose run the pure-Go loops on
// arm64.
func asmConversions(func(string, ...any)) []conversions { return nil }

func asmTranspose8(func(string, ...any)) func(dst []float32, stride int, src []float32, pitch, n int) {
	return nil
}

// TestISAInUse checks that init followed EnvISA: NEON unless it names the
// pure-Go loops.
func TestISAInUse(t *testing.T) {
	want, taps, bank := ISANEON, any(tapsNEON32), any(bankNEON32)
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvISA)), ISAGo) {
		want, taps, bank = ISAGo, tapsTwinF32, bankGo[float32]
	}
	if ISA() != want || fn(taps32) != fn(taps) || fn(bank32) != fn(bank) || blockBySets != (want == ISAGo) {
		t.Errorf("%s=%q: ISA %s, want %s with its loops", EnvISA, os.Getenv(EnvISA), ISA(), want)
	}
}

func fn(f any) uintptr { return reflect.ValueOf(f).Pointer() }
