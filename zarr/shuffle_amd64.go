//go:build !noasm && amd64

package zarr

//go:generate sh -c "cd asm && go run . -out ../shuffle_amd64.s -stubs ../stubs_amd64.go -pkg zarr"

// unshuffle2 is unshuffle2Go, sixteen elements at a time in SSE2.
func unshuffle2(dst, a, b []byte) {
	k := len(a) / 16
	if k > 0 && len(b) >= 16*k && len(dst) >= 32*k {
		unshuffle2SSE2(&dst[0], &a[0], &b[0], k)
	}
	unshuffle2Go(dst[32*k:], a[16*k:], b[16*k:])
}

// unshuffle4 is unshuffle4Go, sixteen elements at a time in SSE2.
func unshuffle4(dst, a, b, c, d []byte) {
	k := len(a) / 16
	if k > 0 && len(b) >= 16*k && len(c) >= 16*k && len(d) >= 16*k && len(dst) >= 64*k {
		unshuffle4SSE2(&dst[0], &a[0], &b[0], &c[0], &d[0], k)
	}
	unshuffle4Go(dst[64*k:], a[16*k:], b[16*k:], c[16*k:], d[16*k:])
}

// shuffle2 is shuffle2Go, sixteen elements at a time in SSE2.
func shuffle2(a, b, src []byte) {
	k := len(a) / 16
	if k > 0 && len(b) >= 16*k && len(src) >= 32*k {
		shuffle2SSE2(&a[0], &b[0], &src[0], k)
	}
	shuffle2Go(a[16*k:], b[16*k:], src[32*k:])
}

// shuffle4 is shuffle4Go, sixteen elements at a time in SSE2.
func shuffle4(a, b, c, d, src []byte) {
	k := len(a) / 16
	if k > 0 && len(b) >= 16*k && len(c) >= 16*k && len(d) >= 16*k && len(src) >= 64*k {
		shuffle4SSE2(&a[0], &b[0], &c[0], &d[0], &src[0], k)
	}
	shuffle4Go(a[16*k:], b[16*k:], c[16*k:], d[16*k:], src[64*k:])
}
