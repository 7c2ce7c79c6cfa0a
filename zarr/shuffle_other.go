//go:build noasm || !amd64

package zarr

// unshuffle2 is unshuffle2Go (no assembly on this platform or with the
// noasm tag).
func unshuffle2(dst, a, b []byte) { unshuffle2Go(dst, a, b) }

// unshuffle4 is unshuffle4Go.
func unshuffle4(dst, a, b, c, d []byte) { unshuffle4Go(dst, a, b, c, d) }

// shuffle2 is shuffle2Go.
func shuffle2(a, b, src []byte) { shuffle2Go(a, b, src) }

// shuffle4 is shuffle4Go.
func shuffle4(a, b, c, d, src []byte) { shuffle4Go(a, b, c, d, src) }
