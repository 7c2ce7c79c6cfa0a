//go:build !noasm && amd64

package simd

import (
	"os"
	"reflect"
	"testing"
)

// asmKernels lists the assembly loops this CPU runs; the others are
// skipped (and say so).
func asmKernels32(logf func(string, ...any)) []kernels[float32] {
	var k []kernels[float32]
	if hasAVX2 {
		k = append(k, kernels[float32]{"AVX2", tapsAVX2F32, setTapsAVX2F32, rowAVX2F32, axpyAVX2F32, blockAVX2F32, bankAVX2F32})
	} else {
		logf("skipping AVX2: the CPU lacks AVX2 or FMA")
	}
	if hasAVX512 {
		k = append(k, kernels[float32]{"AVX512", tapsAVX512F32, setTapsAVX512F32, rowAVX512F32, axpyAVX512F32, blockAVX512F32, bankAVX512F32})
	} else {
		logf("skipping AVX-512: the CPU lacks AVX-512F or BMI2")
	}
	return k
}

func asmKernels64(logf func(string, ...any)) []kernels[float64] {
	var k []kernels[float64]
	if hasAVX2 {
		k = append(k, kernels[float64]{"AVX2", tapsAVX2F64, setTapsAVX2F64, rowAVX2F64, axpyAVX2F64, blockAVX2F64, bankAVX2F64})
	}
	if hasAVX512 {
		k = append(k, kernels[float64]{"AVX512", tapsAVX512F64, setTapsAVX512F64, rowAVX512F64, axpyAVX512F64, blockAVX512F64, bankAVX512F64})
	}
	return k
}

func asmConversions(logf func(string, ...any)) []conversions {
	var c []conversions
	if hasAVX2 {
		c = append(c, conversions{"AVX2", loadUint8AVX2, loadUint16AVX2, storeUint8AVX2, storeUint16AVX2})
	}
	if hasAVX512 {
		c = append(c, conversions{"AVX512", loadUint8AVX512, loadUint16AVX512, storeUint8AVX512, storeUint16AVX512})
	}
	return c
}

// asmTranspose8 is the assembly transpose where the CPU runs it, else nil.
func asmTranspose8(logf func(string, ...any)) func(dst []float32, stride int, src []float32, pitch, n int) {
	if !hasAVX2 && !hasAVX512 {
		logf("skipping transpose8AVX: the CPU lacks AVX2 and AVX-512")
		return nil
	}
	return transpose8AVX
}

// TestISAInUse checks that init followed EnvISA: ISA names what chooseISA
// gives for this CPU and the variable's value, and the loops in use are
// that instruction set's.
func TestISAInUse(t *testing.T) {
	want := chooseISA(os.Getenv(EnvISA), hasAVX512, hasAVX2)
	if ISA() != want {
		t.Fatalf("ISA %s with %s=%q, want %s", ISA(), EnvISA, os.Getenv(EnvISA), want)
	}
	taps, tr := map[string]any{ISAGo: tapsTwinF32, ISAAVX2: tapsAVX2F32, ISAAVX512: tapsAVX512F32}[want], any(transpose8AVX)
	if want == ISAGo {
		tr = transpose8Go
	}
	if fn(taps32) != fn(taps) || fn(transpose8) != fn(tr) || blockBySets != (want == ISAGo) {
		t.Errorf("ISA %s, but the loops in use are another's", want)
	}
	t.Logf("%s=%q: %s", EnvISA, os.Getenv(EnvISA), ISA())
}

func fn(f any) uintptr { return reflect.ValueOf(f).Pointer() }
