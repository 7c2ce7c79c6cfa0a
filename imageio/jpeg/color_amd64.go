//go:build !noasm && amd64

package jpeg

// The colour kernels (jpeg_amd64.s) take whole chunks of 32 pixels that
// lie inside the rows; where a row's length is not a multiple of 32 the
// last chunk is placed to end at the row's end, overlapping the one
// before it (it writes the same values there). Rows shorter than a chunk
// and CPUs without AVX2 take the Go twins.

// yccToRGB is yccToRGBGo, in AVX2 where the CPU has it.
func yccToRGB(dst, y, cb, cr []byte, w int) {
	if !hasAVX2 || w < 32 {
		yccToRGBGo(dst, y, cb, cr, w)
		return
	}
	dst, y, cb, cr = dst[:3*w], y[:w], cb[:w], cr[:w]
	yccToRGBAVX2(&dst[0], &y[0], &cb[0], &cr[0], w/32)
	if x := w - 32; w%32 != 0 {
		yccToRGBAVX2(&dst[3*x], &y[x], &cb[x], &cr[x], 1)
	}
}

// yccH2V2 is yccH2V2Go, in AVX2 where the CPU has it. A chunk of the
// kernel covers chroma samples i0 … i0+15 (pixels 2·i0 … 2·i0+31) and
// reads samples i0−1 … i0+16, so chunks start at 1 and end by dw−1; the
// pixels before and after them are yccH2V2Span's.
func yccH2V2(dst, y, bN, bF, rN, rF []byte, dw, w int) {
	last := min(dw-17, (w-32)/2) // the last chunk's first sample
	if !hasAVX2 || last < 1 {
		yccH2V2Go(dst, y, bN, bF, rN, rF, dw, w)
		return
	}
	dst, y = dst[:3*w], y[:w]
	bN, bF, rN, rF = bN[:dw], bF[:dw], rN[:dw], rF[:dw]
	n := (last-1)/16 + 1
	yccH2V2AVX2(&dst[6], &y[2], &bN[1], &bF[1], &rN[1], &rF[1], n)
	if i := last; 1+16*(n-1) < i {
		yccH2V2AVX2(&dst[6*i], &y[2*i], &bN[i], &bF[i], &rN[i], &rF[i], 1)
	}
	yccH2V2Span(dst, y, bN, bF, rN, rF, dw, 0, 2)
	yccH2V2Span(dst, y, bN, bF, rN, rF, dw, 2*last+32, w)
}

// upH2V1 is upH2V1Go, in AVX2 where the CPU has it; the chunks are
// placed as yccH2V2's, the outputs before and after them upH2V1Span's.
func upH2V1(out, in []byte, dw int) {
	last := dw - 17 // the last chunk's first sample
	if !hasAVX2 || last < 1 {
		upH2V1Go(out, in, dw)
		return
	}
	out, in = out[:2*dw], in[:dw]
	n := (last-1)/16 + 1
	upH2V1AVX2(&out[2], &in[1], n)
	if i := last; 1+16*(n-1) < i {
		upH2V1AVX2(&out[2*i], &in[i], 1)
	}
	upH2V1Span(out, in, dw, 0, 2)
	upH2V1Span(out, in, dw, 2*last+32, 2*dw)
}

// rgbToYCC is rgbToYCCGo, in AVX2 where the CPU has it.
func rgbToYCC(y, cb, cr, src []byte, w int) {
	if !hasAVX2 || w < 32 {
		rgbToYCCGo(y, cb, cr, src, w)
		return
	}
	src, y, cb, cr = src[:3*w], y[:w], cb[:w], cr[:w]
	rgbToYCCAVX2(&y[0], &cb[0], &cr[0], &src[0], w/32)
	if x := w - 32; w%32 != 0 {
		rgbToYCCAVX2(&y[x], &cb[x], &cr[x], &src[3*x], 1)
	}
}

// downH2V2 is downH2V2Go, in AVX2 where the CPU has it. The bias
// alternates with the output's parity, so an overlapping last chunk
// starts at an even output, and where n is odd the last output is the
// twin's.
func downH2V2(out, in0, in1 []byte, n int) {
	if !hasAVX2 || n < 32 {
		downH2V2Go(out, in0, in1, n)
		return
	}
	out, in0, in1 = out[:n], in0[:2*n], in1[:2*n]
	downH2V2AVX2(&out[0], &in0[0], &in1[0], n/32)
	if x := (n - 32) &^ 1; n%32 != 0 {
		downH2V2AVX2(&out[x], &in0[2*x], &in1[2*x], 1)
		if x += 32; x < n {
			downH2V2Go(out[x:], in0[2*x:], in1[2*x:], n-x)
		}
	}
}
