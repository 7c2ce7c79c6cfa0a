package simd

import "github.com/ndconv/ndconv/nd"

// dense3Go is the reference of the dense 3×3 loops (dense3AVX2F32/F64,
// dense3AVX512F32/F64): the steps of a dense 3×3 kernel w for BlockRows
// rows at source pitch srcPitch, run by setsGo.
func dense3Go[F nd.Float](out []F, outPitch, n int, src []F, srcPitch int, w []F) {
	var steps []int
	var ws []F
	for r := range BlockRows + 2 {
		for c := range 3 {
			mask := 0
			for i := range BlockRows {
				v := F(0)
				if kr := r - i; kr >= 0 && kr < 3 {
					v, mask = w[kr*3+c], mask|1<<i
				}
				ws = append(ws, v)
			}
			steps = append(steps, (r*srcPitch+c)<<8|mask)
		}
	}
	setsGo(BlockRows, out, outPitch, n, src, steps, ws)
}
