//go:build noasm || !amd64

package jpeg

// idct is idctGo (no assembly on this platform or with the noasm tag).
func idct(blk *[64]int16, q *[64]int32, dst []byte, off, stride int) {
	idctGo(blk, q, dst, off, stride)
}

// fdctQuant is fdctQuantGo.
func fdctQuant(src []byte, off, stride int, t *quantTable, ws *[64]int32, out *[64]int16) uint64 {
	return fdctQuantGo(src, off, stride, t, ws, out)
}
