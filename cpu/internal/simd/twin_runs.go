package simd

import (
	"math"
	"unsafe"

	"github.com/ndconv/ndconv/nd"
)

// runsProgram encodes a row block's steps (BlockRows sets) as the
// program the row-block loops follow in their widest pass
// (blockRunsAVX2F32/F64, blockRunsAVX512F32/F64): the steps grouped into runs of consecutive
// steps that add to the same sets, each run a header word
// count<<8 | mask followed by count records — the step's source offset in
// bytes, then its BlockRows weights packed as F — and a zero word at the
// end. Steps that add to no set are left out (they add nothing). Each
// set still takes its steps in their order, so the program's results are
// the steps' (blockRunsGo is its reference).
func runsProgram[F nd.Float](steps []int, w []F, sets int) []uint64 {
	var f F
	size := int(unsafe.Sizeof(f))
	words := sets * size / 8 // the weights of one record
	var prog []uint64
	head := -1 // the current run's header word
	for s, st := range steps {
		mask := st & (1<<sets - 1)
		if mask == 0 {
			continue
		}
		if head < 0 || int(prog[head]&0xff) != mask {
			head = len(prog)
			prog = append(prog, uint64(mask))
		}
		prog[head] += 1 << 8
		prog = append(prog, uint64((st>>8)*size))
		ws := w[s*sets:][:sets]
		for k := range words {
			var word uint64
			if size == 4 {
				word = uint64(math.Float32bits(float32(ws[2*k]))) | uint64(math.Float32bits(float32(ws[2*k+1])))<<32
			} else {
				word = math.Float64bits(float64(ws[k]))
			}
			prog = append(prog, word)
		}
	}
	return append(prog, 0)
}

// blockRunsGo is the reference of the program-following loops: it decodes
// prog (runsProgram) back into steps and runs setsGo over them, so a loop
// that follows prog must give blockGo's bits for the steps prog was made
// from.
func blockRunsGo[F nd.Float](out []F, outPitch, n int, src []F, prog []uint64) {
	var f F
	size := int(unsafe.Sizeof(f))
	sets := BlockRows
	words := sets * size / 8
	var steps []int
	var w []F
	for at := 0; prog[at] != 0; {
		mask, count := int(prog[at]&0xff), int(prog[at]>>8)
		at++
		for range count {
			steps = append(steps, int(prog[at])/size<<8|mask)
			at++
			for k := range words {
				word := prog[at+k]
				if size == 4 {
					w = append(w, F(math.Float32frombits(uint32(word))), F(math.Float32frombits(uint32(word>>32))))
				} else {
					w = append(w, F(math.Float64frombits(word)))
				}
			}
			at += words
		}
	}
	setsGo(sets, out, outPitch, n, src, steps, w)
}
