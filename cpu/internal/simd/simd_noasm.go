//go:build noasm || !amd64

package simd

func taps32(acc, src []float32, offs []int, w []float32)    { tapsGo(acc, src, offs, w) }
func taps64(acc, src []float64, offs []int, w []float64)    { tapsGo(acc, src, offs, w) }
func row32(acc, src, w []float32)                           { rowGo(acc, src, w) }
func row64(acc, src, w []float64)                           { rowGo(acc, src, w) }
func axpy32(y, x []float32, a float32)                      { axpyGo(y, x, a) }
func axpy64(y, x []float64, a float64)                      { axpyGo(y, x, a) }
func setTaps32(acc, src []float32, offs []int, w []float32) { setTapsGo(acc, src, offs, w) }
func setTaps64(acc, src []float64, offs []int, w []float64) { setTapsGo(acc, src, offs, w) }
func loadUint8(dst []float32, src []uint8)                  { loadUint8Go(dst, src) }
func loadUint16(dst []float32, src []uint16)                { loadUint16Go(dst, src) }
func storeUint8(dst []uint8, src []float32)                 { storeUint8Go(dst, src) }
func storeUint16(dst []uint16, src []float32)               { storeUint16Go(dst, src) }
func fmaPeak(rounds int) int64                              { return fmaPeakGo(rounds) }
