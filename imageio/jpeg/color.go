package jpeg

// Colour conversion and chroma resampling as libjpeg-turbo does them
// (jdcolor.c, jdsample.c for decoding; jccolor.c, jcsample.c for
// encoding), on one row at a time.

const (
	scaleBits = 16
	oneHalf   = 1 << (scaleBits - 1)
)

// fix is libjpeg's FIX(x) at scaleBits: x in fixed point, rounded.
func fix(x float64) int32 { return int32(x*(1<<scaleBits) + 0.5) }

// The YCbCr → RGB tables of jdcolor.c build_ycc_rgb_table, indexed by the
// chroma sample.
var crR, cbB, crG, cbG [256]int32

// clamp8 is libjpeg's sample_range_limit for the range colour conversion
// can reach: clamp8[(v+256)&1023] is v limited to 0..255.
var clamp8 [1024]uint8

func init() {
	for i := range 256 {
		x := int32(i - 128)
		crR[i] = (fix(1.40200)*x + oneHalf) >> scaleBits
		cbB[i] = (fix(1.77200)*x + oneHalf) >> scaleBits
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + oneHalf
	}
	for i := range clamp8 {
		clamp8[i] = uint8(max(0, min(255, i-256)))
	}
}

// yccToRGBGo converts w samples of Y, Cb, Cr rows to interleaved RGB
// (jdcolext.c ycc_rgb_convert_internal). It is yccToRGB's pure-Go twin.
func yccToRGBGo(dst, y, cb, cr []byte, w int) {
	dst = dst[:3*w]
	y, cb, cr = y[:w], cb[:w], cr[:w]
	for x := range w {
		Y := int32(y[x])
		b, r := cb[x], cr[x]
		o := dst[3*x : 3*x+3 : 3*x+3]
		o[0] = clamp8[(Y+crR[r]+256)&1023]
		o[1] = clamp8[(Y+((cbG[b]+crG[r])>>scaleBits)+256)&1023]
		o[2] = clamp8[(Y+cbB[b]+256)&1023]
	}
}

// interleave3 writes three rows of w samples as interleaved triples (the
// null conversion of an RGB JPEG).
func interleave3(dst, a, b, c []byte, w int) {
	dst = dst[:3*w]
	a, b, c = a[:w], b[:w], c[:w]
	for x := range w {
		o := dst[3*x : 3*x+3 : 3*x+3]
		o[0], o[1], o[2] = a[x], b[x], c[x]
	}
}

// upH2V1Go is h2v1_fancy_upsample on one row of dw > 2 samples: the
// triangle filter at ¾ and ¼, biased 1 and 2 alternately; 2·dw outputs.
// It is upH2V1's pure-Go twin.
func upH2V1Go(out, in []byte, dw int) {
	in = in[:dw]
	out = out[:2*dw]
	v := int(in[0])
	out[0] = byte(v)
	out[1] = byte((v*3 + int(in[1]) + 2) >> 2)
	for i := 1; i < dw-1; i++ {
		v := int(in[i]) * 3
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0] = byte((v + int(in[i-1]) + 1) >> 2)
		o[1] = byte((v + int(in[i+1]) + 2) >> 2)
	}
	v = int(in[dw-1])
	out[2*dw-2] = byte((v*3 + int(in[dw-2]) + 1) >> 2)
	out[2*dw-1] = byte(v)
}

// upH2V1Span writes outputs x0 … x1−1 of upH2V1Go's row, one at a time:
// ¾ of sample x/2 and ¼ of its left (x even) or right (x odd) neighbour,
// clamped to the row, which gives the edge outputs' (4·v + 1) >> 2 = v and
// (4·v + 2) >> 2 = v.
func upH2V1Span(out, in []byte, dw, x0, x1 int) {
	in = in[:dw]
	for x := x0; x < x1; x++ {
		i := x >> 1
		j, bias := min(i+1, dw-1), 2
		if x&1 == 0 {
			j, bias = max(i-1, 0), 1
		}
		out[x] = byte((3*int(in[i]) + int(in[j]) + bias) >> 2)
	}
}

// upH2Box is h2v1_upsample (and one row of h2v2_upsample): each sample
// twice; 2·dw outputs.
func upH2Box(out, in []byte, dw int) {
	in = in[:dw]
	out = out[:2*dw]
	for i, v := range in {
		out[2*i], out[2*i+1] = v, v
	}
}

// upH1V2 is one output row of h1v2_fancy_upsample: ¾ of the nearer input
// row and ¼ of the farther, with bias 1 for an upper output row (the
// farther row above) and 2 for a lower one.
func upH1V2(out, near, far []byte, dw, bias int) {
	out, near, far = out[:dw], near[:dw], far[:dw]
	for i := range out {
		out[i] = byte((int(near[i])*3 + int(far[i]) + bias) >> 2)
	}
}

// upH2V2 is one output row of h2v2_fancy_upsample on dw > 2 samples:
// column sums 3·near + far, then the horizontal triangle filter with
// biases 8 and 7; 2·dw outputs.
func upH2V2(out, near, far []byte, dw int) {
	near, far = near[:dw], far[:dw]
	out = out[:2*dw]
	this := int(near[0])*3 + int(far[0])
	next := int(near[1])*3 + int(far[1])
	out[0] = byte((this*4 + 8) >> 4)
	out[1] = byte((this*3 + next + 7) >> 4)
	last := this
	this = next
	for i := 1; i < dw-1; i++ {
		next = int(near[i+1])*3 + int(far[i+1])
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0] = byte((this*3 + last + 8) >> 4)
		o[1] = byte((this*3 + next + 7) >> 4)
		last = this
		this = next
	}
	out[2*dw-2] = byte((this*3 + last + 8) >> 4)
	out[2*dw-1] = byte((this*4 + 7) >> 4)
}

// RGB → YCbCr (jccolor.c rgb_ycc_start): its tables are linear in the
// sample, so the sums are computed directly with the same constants and
// roundings (Y rounded by ONE_HALF, Cb and Cr by ONE_HALF-1 so that they
// stay below 256).
var (
	fyR, fyG, fyB    = fix(0.29900), fix(0.58700), fix(0.11400)
	fcbR, fcbG, fcbB = fix(0.16874), fix(0.33126), fix(0.50000)
	fcrG, fcrB       = fix(0.41869), fix(0.08131)
)

// rgbToYCCGo converts w interleaved RGB pixels to three rows; it is
// rgbToYCC's pure-Go twin. Two pixels
// go through each multiply, one in each 32-bit half of a uint64: the
// negative terms are written as c·(255 − v) with the constant moved into
// the offset, so that every half stays within 0 … 2^25 and no carry
// crosses (the sums, and so the samples, are the scalar ones).
func rgbToYCCGo(y, cb, cr, src []byte, w int) {
	src = src[:3*w]
	y, cb, cr = y[:w], cb[:w], cr[:w]
	const lo = 1<<32 | 1
	yr, yg, yb := uint64(fyR), uint64(fyG), uint64(fyB)
	br, bg, bb := uint64(fcbR), uint64(fcbG), uint64(fcbB)
	rg, rb := uint64(fcrG), uint64(fcrB)
	const off = 128<<scaleBits + oneHalf - 1
	offY := uint64(oneHalf) * lo
	offB := uint64(off-255*(fcbR+fcbG)) * lo
	offR := uint64(off-255*(fcrG+fcrB)) * lo
	const m255 = 255 * lo
	x := 0
	for ; x+1 < w; x += 2 {
		p := src[3*x : 3*x+6 : 3*x+6]
		r := uint64(p[0]) | uint64(p[3])<<32
		g := uint64(p[1]) | uint64(p[4])<<32
		b := uint64(p[2]) | uint64(p[5])<<32
		vy := yr*r + yg*g + yb*b + offY
		vb := bb*b + br*(m255-r) + bg*(m255-g) + offB
		vr := bb*r + rg*(m255-g) + rb*(m255-b) + offR
		oy, ob, or := y[x:x+2:x+2], cb[x:x+2:x+2], cr[x:x+2:x+2]
		oy[0], oy[1] = byte(vy>>scaleBits), byte(vy>>(32+scaleBits))
		ob[0], ob[1] = byte(vb>>scaleBits), byte(vb>>(32+scaleBits))
		or[0], or[1] = byte(vr>>scaleBits), byte(vr>>(32+scaleBits))
	}
	for ; x < w; x++ {
		p := src[3*x : 3*x+3 : 3*x+3]
		r, g, b := int32(p[0]), int32(p[1]), int32(p[2])
		y[x] = uint8((fyR*r + fyG*g + fyB*b + oneHalf) >> scaleBits)
		cb[x] = uint8((fcbB*b - fcbR*r - fcbG*g + off) >> scaleBits)
		cr[x] = uint8((fcbB*r - fcrG*g - fcrB*b + off) >> scaleBits)
	}
}

// downH2V2Go is h2v2_downsample on two rows already expanded to 2·n
// samples: each output the sum of a 2×2 block plus a bias of 1, 2, 1, 2…,
// over 4. It is downH2V2's pure-Go twin.
func downH2V2Go(out, in0, in1 []byte, n int) {
	out = out[:n]
	in0, in1 = in0[:2*n], in1[:2*n]
	for i := range out {
		a := in0[2*i : 2*i+2 : 2*i+2]
		b := in1[2*i : 2*i+2 : 2*i+2]
		out[i] = byte((int(a[0]) + int(a[1]) + int(b[0]) + int(b[1]) + 1 + i&1) >> 2)
	}
}

// downH2V1 is h2v1_downsample on one row expanded to 2·n samples: pairs
// averaged with a bias of 0, 1, 0, 1….
func downH2V1(out, in []byte, n int) {
	out = out[:n]
	in = in[:2*n]
	for i := range out {
		a := in[2*i : 2*i+2 : 2*i+2]
		out[i] = byte((int(a[0]) + int(a[1]) + i&1) >> 1)
	}
}

// yccH2V2Go is upH2V2 of the Cb and Cr rows followed by yccToRGB, fused:
// output row y of w pixels (2·dw − 1 or 2·dw) from the luma row and the
// nearer and farther chroma rows (dw > 2 samples each), without the
// upsampled rows. It is yccH2V2's pure-Go twin.
func yccH2V2Go(dst, y, bN, bF, rN, rF []byte, dw, w int) {
	dst = dst[:3*w]
	y = y[:w]
	bN, bF, rN, rF = bN[:dw], bF[:dw], rN[:dw], rF[:dw]
	put := func(x int, cb, cr int) {
		Y := int32(y[x])
		o := dst[3*x : 3*x+3 : 3*x+3]
		o[0] = clamp8[(Y+crR[cr&255]+256)&1023]
		o[1] = clamp8[(Y+((cbG[cb&255]+crG[cr&255])>>scaleBits)+256)&1023]
		o[2] = clamp8[(Y+cbB[cb&255]+256)&1023]
	}
	bThis := int(bN[0])*3 + int(bF[0])
	rThis := int(rN[0])*3 + int(rF[0])
	bNext := int(bN[1])*3 + int(bF[1])
	rNext := int(rN[1])*3 + int(rF[1])
	put(0, (bThis*4+8)>>4, (rThis*4+8)>>4)
	put(1, (bThis*3+bNext+7)>>4, (rThis*3+rNext+7)>>4)
	bLast, rLast := bThis, rThis
	bThis, rThis = bNext, rNext
	for i := 1; i < dw-1; i++ {
		bNext = int(bN[i+1])*3 + int(bF[i+1])
		rNext = int(rN[i+1])*3 + int(rF[i+1])
		x := 2 * i
		put(x, (bThis*3+bLast+8)>>4, (rThis*3+rLast+8)>>4)
		if x+1 < w {
			put(x+1, (bThis*3+bNext+7)>>4, (rThis*3+rNext+7)>>4)
		}
		bLast, rLast = bThis, rThis
		bThis, rThis = bNext, rNext
	}
	x := 2 * (dw - 1)
	if x < w {
		put(x, (bThis*3+bLast+8)>>4, (rThis*3+rLast+8)>>4)
	}
	if x+1 < w {
		put(x+1, (bThis*4+7)>>4, (rThis*4+7)>>4)
	}
}

// yccH2V2Span writes pixels x0 … x1−1 of yccH2V2Go's row, a pixel at a
// time: the column sums of chroma samples i = x/2 and of its left (x
// even) or right (x odd) neighbour, clamped to the row, which gives the
// edge pixels' (4·sum + 8) >> 4 and (4·sum + 7) >> 4.
func yccH2V2Span(dst, y, bN, bF, rN, rF []byte, dw, x0, x1 int) {
	bN, bF, rN, rF = bN[:dw], bF[:dw], rN[:dw], rF[:dw]
	for x := x0; x < x1; x++ {
		i := x >> 1
		j, bias := min(i+1, dw-1), 7
		if x&1 == 0 {
			j, bias = max(i-1, 0), 8
		}
		cb := (3*(3*int(bN[i])+int(bF[i])) + 3*int(bN[j]) + int(bF[j]) + bias) >> 4
		cr := (3*(3*int(rN[i])+int(rF[i])) + 3*int(rN[j]) + int(rF[j]) + bias) >> 4
		Y := int32(y[x])
		o := dst[3*x : 3*x+3 : 3*x+3]
		o[0] = clamp8[(Y+crR[cr]+256)&1023]
		o[1] = clamp8[(Y+((cbG[cb]+crG[cr])>>scaleBits)+256)&1023]
		o[2] = clamp8[(Y+cbB[cb]+256)&1023]
	}
}
