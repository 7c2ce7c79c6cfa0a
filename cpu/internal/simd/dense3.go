package simd

import "github.com/ndconv/ndconv/nd"

// dense3Steps is a row block's steps recognised as a dense 3×3 kernel's
// (every tap nonzero, columns one value apart), which the loops
// dense3AVX2F32/F64 and dense3AVX512F32/F64 run with the nine weights
// held in registers: base is
// the first step's source offset, pitch the source's row pitch, w the
// kernel, row-major.
type dense3Steps[F nd.Float] struct {
	base, pitch int
	w           [9]F
}

// findDense3 returns steps' dense 3×3 kernel for BlockRows sets, or nil:
// the steps must be exactly the 6 source rows × 3 columns of blockSteps
// for such a kernel, each with the sets whose kernel row it is and their
// weights.
func findDense3[F nd.Float](steps []int, w []F) *dense3Steps[F] {
	const rows = BlockRows + 2
	if len(steps) != rows*3 {
		return nil
	}
	d := &dense3Steps[F]{base: steps[0] >> 8, pitch: steps[3]>>8 - steps[0]>>8}
	if d.pitch < 3 {
		return nil
	}
	for kr := range 3 {
		for kc := range 3 {
			d.w[kr*3+kc] = w[(kr*3+kc)*BlockRows] // set 0's taps
		}
	}
	for s, st := range steps {
		r, c := s/3, s%3
		if st>>8 != d.base+r*d.pitch+c {
			return nil
		}
		mask := 0
		for i := range BlockRows {
			kr := r - i
			if kr < 0 || kr >= 3 {
				continue
			}
			mask |= 1 << i
			if v := w[s*BlockRows+i]; v != d.w[kr*3+c] || v == 0 {
				return nil
			}
		}
		if st&0xff != mask {
			return nil
		}
	}
	return d
}

// dense3F32 and dense3F64 are the dense 3×3 loops where the machine has
// them (AVX2, AVX-512), else nil.
var (
	dense3F32 func(out []float32, outPitch, n int, src []float32, srcPitch int, w []float32)
	dense3F64 func(out []float64, outPitch, n int, src []float64, srcPitch int, w []float64)
)
