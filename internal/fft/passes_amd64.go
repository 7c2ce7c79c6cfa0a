//go:build !noasm && amd64

package fft

import "golang.org/x/sys/cpu"

// The SIMD passes this CPU runs, widest first: AVX-512F, AVX2 with FMA;
// the first is used.
func init() {
	if cpu.X86.HasAVX512F {
		simdSets = append(simdSets, simdSet{"AVX512",
			map[int]passFunc{2: pass2AVX512, 3: pass3AVX512, 4: pass4AVX512, 5: pass5AVX512}, mulSpectraAVX512,
			realPostAVX512, realPreAVX512, transposeAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		simdSets = append(simdSets, simdSet{"AVX2",
			map[int]passFunc{2: pass2AVX2, 3: pass3AVX2, 4: pass4AVX2, 5: pass5AVX2}, mulSpectraAVX2,
			realPostAVX2, realPreAVX2, transposeAVX2})
	}
	if len(simdSets) > 0 {
		simd = simdSets[0]
	}
}
