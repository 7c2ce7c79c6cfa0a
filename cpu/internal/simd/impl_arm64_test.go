//go:build !noasm && arm64

package simd

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// asmKernels32 lists the NEON loops (every arm64 CPU has them); Block runs
// them set by set.
func asmKernels32(func(string, ...any)) []kernels[float32] {
	return []kernels[float32]{{"NEON", tapsNEON32, setTapsNEON32, rowNEON32, axpyNEON32, neonBlock[float32](BlockRows), neonBlock[float32](BankSets)}}
}

func asmKernels64(func(string, ...any)) []kernels[float64] {
	return []kernels[float64]{{"NEON", tapsNEON64, setTapsNEON64, rowNEON64, axpyNEON64, neonBlock[float64](BlockRows), neonBlock[float64](BankSets)}}
}

// neonBlock is Block for sets sets through the NEON SetTaps, with the
// steps prepared on the spot.
func neonBlock[F float32 | float64](sets int) func(out []F, outPitch, n int, src []F, steps []int, w []F) {
	return func(out []F, outPitch, n int, src []F, steps []int, w []F) {
		st := NewSteps(sets, steps, w)
		if is32[F]() {
			blockSets(f32s(out), outPitch, n, f32s(src), sets, st.offs, f32s2(st.setW), setTapsNEON32)
		} else {
			blockSets(f64s(out), outPitch, n, f64s(src), sets, st.offs, f64s2(st.setW), setTapsNEON64)
		}
	}
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
	want, taps := ISANEON, any(tapsNEON32)
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvISA)), ISAGo) {
		want, taps = ISAGo, tapsTwinF32
	}
	if ISA() != want || reflect.ValueOf(taps32).Pointer() != reflect.ValueOf(taps).Pointer() {
		t.Errorf("%s=%q: ISA %s, want %s with its loops", EnvISA, os.Getenv(EnvISA), ISA(), want)
	}
}
