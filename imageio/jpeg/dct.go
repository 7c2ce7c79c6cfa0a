package jpeg

// The accurate integer DCTs of libjpeg (jidctint.c, jfdctint.c: the
// Loeffler–Ligtenberg–Moschytz algorithm with 13-bit constants), and
// libjpeg-turbo's quantization. The arithmetic follows the C with JLONG as
// Go's int (64 bits on the platforms Go supports for this package's
// speed; the results fit in 32 bits for any input, except where the C
// truncates to int, which is done here with int32 as there).

const (
	constBits = 13
	pass1Bits = 2

	fix0_298631336 = 2446
	fix0_390180644 = 3196
	fix0_541196100 = 4433
	fix0_765366865 = 6270
	fix0_899976223 = 7373
	fix1_175875602 = 9633
	fix1_501321110 = 12299
	fix1_847759065 = 15137
	fix1_961570560 = 16069
	fix2_053119869 = 16819
	fix2_562915447 = 20995
	fix3_072711026 = 25172
)

// idctLimit is libjpeg's post-IDCT range-limit table (jdmaster.c
// prepare_range_limit_table, from IDCT_range_limit on), indexed by the
// descaled output masked to 10 bits: x in -128..127 gives x+128, larger
// values 255 and smaller 0, within the 10-bit wrap-around the C has for
// coefficients of corrupt files.
var idctLimit = func() (t [1024]uint8) {
	for u := range t {
		switch {
		case u < 128:
			t[u] = uint8(u + 128)
		case u < 512:
			t[u] = 255
		case u < 896:
			t[u] = 0
		default:
			t[u] = uint8(u - 896)
		}
	}
	return t
}()

// idctDC writes the 8×8 block of a block whose only nonzero coefficient is
// the DC, coef × q: what idct gives for it (its zero-column and zero-row
// shortcuts).
func idctDC(coef int16, q int32, dst []byte, off, stride int) {
	ws := int32(uint32(int32(coef)*q) << pass1Bits)
	v := idctLimit[((int(ws)+(1<<(pass1Bits+2)))>>(pass1Bits+3))&1023]
	w := uint64(v) * 0x0101010101010101
	for r := range 8 {
		o := off + r*stride
		d := dst[o : o+8 : o+8]
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = byte(w), byte(w), byte(w), byte(w), byte(w), byte(w), byte(w), byte(w)
	}
}

// idctGo is libjpeg's jpeg_idct_islow: dequantizes blk (natural order) by q
// (the quantization table as libjpeg-turbo's ISLOW_MULT_TYPE, short, holds
// it), inverse-transforms it and writes the 8×8 samples at dst[off:] with
// the given row stride.
func idctGo(blk *[64]int16, q *[64]int32, dst []byte, off, stride int) {
	var ws [64]int32
	// Pass 1: columns, into ws, scaled by 2**pass1Bits.
	for c := range 8 {
		if blk[8+c]|blk[16+c]|blk[24+c]|blk[32+c]|blk[40+c]|blk[48+c]|blk[56+c] == 0 {
			dc := int32(uint32(int32(blk[c])*q[c]) << pass1Bits)
			ws[c], ws[8+c], ws[16+c], ws[24+c] = dc, dc, dc, dc
			ws[32+c], ws[40+c], ws[48+c], ws[56+c] = dc, dc, dc, dc
			continue
		}
		z2 := int(int32(blk[16+c]) * q[16+c])
		z3 := int(int32(blk[48+c]) * q[48+c])
		z1 := (z2 + z3) * fix0_541196100
		tmp2 := z1 - z3*fix1_847759065
		tmp3 := z1 + z2*fix0_765366865

		z2 = int(int32(blk[c]) * q[c])
		z3 = int(int32(blk[32+c]) * q[32+c])
		tmp0 := (z2 + z3) << constBits
		tmp1 := (z2 - z3) << constBits

		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		tmp0 = int(int32(blk[56+c]) * q[56+c])
		tmp1 = int(int32(blk[40+c]) * q[40+c])
		tmp2 = int(int32(blk[24+c]) * q[24+c])
		tmp3 = int(int32(blk[8+c]) * q[8+c])

		z1 = tmp0 + tmp3
		z2 = tmp1 + tmp2
		z3 = tmp0 + tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * fix1_175875602

		tmp0 *= fix0_298631336
		tmp1 *= fix2_053119869
		tmp2 *= fix3_072711026
		tmp3 *= fix1_501321110
		z1 *= -fix0_899976223
		z2 *= -fix2_562915447
		z3 = z3*-fix1_961570560 + z5
		z4 = z4*-fix0_390180644 + z5

		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4

		const r1 = 1 << (constBits - pass1Bits - 1)
		const s1 = constBits - pass1Bits
		ws[c] = int32((tmp10 + tmp3 + r1) >> s1)
		ws[56+c] = int32((tmp10 - tmp3 + r1) >> s1)
		ws[8+c] = int32((tmp11 + tmp2 + r1) >> s1)
		ws[48+c] = int32((tmp11 - tmp2 + r1) >> s1)
		ws[16+c] = int32((tmp12 + tmp1 + r1) >> s1)
		ws[40+c] = int32((tmp12 - tmp1 + r1) >> s1)
		ws[24+c] = int32((tmp13 + tmp0 + r1) >> s1)
		ws[32+c] = int32((tmp13 - tmp0 + r1) >> s1)
	}
	// Pass 2: rows, descaled by 8 and 2**pass1Bits, range-limited.
	for r := range 8 {
		w := (*[8]int32)(ws[r*8 : r*8+8])
		o := off + r*stride
		d := (*[8]byte)(dst[o : o+8 : o+8])
		if w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7] == 0 {
			v := idctLimit[((int(w[0])+(1<<(pass1Bits+2)))>>(pass1Bits+3))&1023]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = v, v, v, v, v, v, v, v
			continue
		}
		z2 := int(w[2])
		z3 := int(w[6])
		z1 := (z2 + z3) * fix0_541196100
		tmp2 := z1 - z3*fix1_847759065
		tmp3 := z1 + z2*fix0_765366865

		tmp0 := (int(w[0]) + int(w[4])) << constBits
		tmp1 := (int(w[0]) - int(w[4])) << constBits

		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		tmp0 = int(w[7])
		tmp1 = int(w[5])
		tmp2 = int(w[3])
		tmp3 = int(w[1])

		z1 = tmp0 + tmp3
		z2 = tmp1 + tmp2
		z3 = tmp0 + tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * fix1_175875602

		tmp0 *= fix0_298631336
		tmp1 *= fix2_053119869
		tmp2 *= fix3_072711026
		tmp3 *= fix1_501321110
		z1 *= -fix0_899976223
		z2 *= -fix2_562915447
		z3 = z3*-fix1_961570560 + z5
		z4 = z4*-fix0_390180644 + z5

		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4

		const r2 = 1 << (constBits + pass1Bits + 3 - 1)
		const s2 = constBits + pass1Bits + 3
		d[0] = idctLimit[((tmp10+tmp3+r2)>>s2)&1023]
		d[7] = idctLimit[((tmp10-tmp3+r2)>>s2)&1023]
		d[1] = idctLimit[((tmp11+tmp2+r2)>>s2)&1023]
		d[6] = idctLimit[((tmp11-tmp2+r2)>>s2)&1023]
		d[2] = idctLimit[((tmp12+tmp1+r2)>>s2)&1023]
		d[5] = idctLimit[((tmp12-tmp1+r2)>>s2)&1023]
		d[3] = idctLimit[((tmp13+tmp0+r2)>>s2)&1023]
		d[4] = idctLimit[((tmp13-tmp0+r2)>>s2)&1023]
	}
}

// fdct is libjpeg's jpeg_fdct_islow on the 8×8 samples at src[off:] (row
// stride given), level-shifted by 128 first (convsamp). The output, in
// natural order, is scaled up by 8 as the C's is.
func fdct(src []byte, off, stride int, out *[64]int32) {
	// Pass 1: rows, scaled by 2**pass1Bits.
	for r := range 8 {
		o := off + r*stride
		s := (*[8]byte)(src[o : o+8 : o+8])
		d := (*[8]int32)(out[r*8 : r*8+8])
		p0, p1, p2, p3 := int(s[0])-128, int(s[1])-128, int(s[2])-128, int(s[3])-128
		p4, p5, p6, p7 := int(s[4])-128, int(s[5])-128, int(s[6])-128, int(s[7])-128
		tmp0 := p0 + p7
		tmp7 := p0 - p7
		tmp1 := p1 + p6
		tmp6 := p1 - p6
		tmp2 := p2 + p5
		tmp5 := p2 - p5
		tmp3 := p3 + p4
		tmp4 := p3 - p4

		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		d[0] = int32((tmp10 + tmp11) << pass1Bits)
		d[4] = int32((tmp10 - tmp11) << pass1Bits)

		const r1 = 1 << (constBits - pass1Bits - 1)
		const s1 = constBits - pass1Bits
		z1 := (tmp12 + tmp13) * fix0_541196100
		d[2] = int32((z1 + tmp13*fix0_765366865 + r1) >> s1)
		d[6] = int32((z1 - tmp12*fix1_847759065 + r1) >> s1)

		z1 = tmp4 + tmp7
		z2 := tmp5 + tmp6
		z3 := tmp4 + tmp6
		z4 := tmp5 + tmp7
		z5 := (z3 + z4) * fix1_175875602

		tmp4 *= fix0_298631336
		tmp5 *= fix2_053119869
		tmp6 *= fix3_072711026
		tmp7 *= fix1_501321110
		z1 *= -fix0_899976223
		z2 *= -fix2_562915447
		z3 = z3*-fix1_961570560 + z5
		z4 = z4*-fix0_390180644 + z5

		d[7] = int32((tmp4 + z1 + z3 + r1) >> s1)
		d[5] = int32((tmp5 + z2 + z4 + r1) >> s1)
		d[3] = int32((tmp6 + z2 + z3 + r1) >> s1)
		d[1] = int32((tmp7 + z1 + z4 + r1) >> s1)
	}
	// Pass 2: columns, pass1Bits removed, left scaled by 8.
	for c := range 8 {
		tmp0 := int(out[c]) + int(out[56+c])
		tmp7 := int(out[c]) - int(out[56+c])
		tmp1 := int(out[8+c]) + int(out[48+c])
		tmp6 := int(out[8+c]) - int(out[48+c])
		tmp2 := int(out[16+c]) + int(out[40+c])
		tmp5 := int(out[16+c]) - int(out[40+c])
		tmp3 := int(out[24+c]) + int(out[32+c])
		tmp4 := int(out[24+c]) - int(out[32+c])

		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		const r0 = 1 << (pass1Bits - 1)
		out[c] = int32((tmp10 + tmp11 + r0) >> pass1Bits)
		out[32+c] = int32((tmp10 - tmp11 + r0) >> pass1Bits)

		const r2 = 1 << (constBits + pass1Bits - 1)
		const s2 = constBits + pass1Bits
		z1 := (tmp12 + tmp13) * fix0_541196100
		out[16+c] = int32((z1 + tmp13*fix0_765366865 + r2) >> s2)
		out[48+c] = int32((z1 - tmp12*fix1_847759065 + r2) >> s2)

		z1 = tmp4 + tmp7
		z2 := tmp5 + tmp6
		z3 := tmp4 + tmp6
		z4 := tmp5 + tmp7
		z5 := (z3 + z4) * fix1_175875602

		tmp4 *= fix0_298631336
		tmp5 *= fix2_053119869
		tmp6 *= fix3_072711026
		tmp7 *= fix1_501321110
		z1 *= -fix0_899976223
		z2 *= -fix2_562915447
		z3 = z3*-fix1_961570560 + z5
		z4 = z4*-fix0_390180644 + z5

		out[56+c] = int32((tmp4 + z1 + z3 + r2) >> s2)
		out[40+c] = int32((tmp5 + z2 + z4 + r2) >> s2)
		out[24+c] = int32((tmp6 + z2 + z3 + r2) >> s2)
		out[8+c] = int32((tmp7 + z1 + z4 + r2) >> s2)
	}
}

// divisor is one entry of libjpeg-turbo's reciprocal quantization table
// (jcdctmgr.c compute_reciprocal) for a divisor of 8 × a table entry.
type divisor struct {
	recip, corr uint32
	shift       uint32 // the C's shift + 16
	mult        uint64 // recip << (32 - shift): the product's top 32 bits are the C's quotient
}

func newDivisor(d uint32) divisor {
	if d == 1 {
		return divisor{recip: 1, corr: 0, shift: 0, mult: 1 << 32}
	}
	b := uint32(31)
	for d>>b == 0 {
		b--
	}
	r := 16 + b
	fq := (uint32(1) << r) / d
	fr := (uint32(1) << r) % d
	c := d / 2
	switch {
	case fr == 0:
		fq >>= 1
		r--
	case fr <= d/2:
		c++
	default:
		fq++
	}
	return divisor{recip: fq & 0xffff, corr: c & 0xffff, shift: r, mult: uint64(fq&0xffff) << (32 - r)}
}

// quantTable holds a table's divisors in zigzag order, for quantize, and
// their recip, corr and shift fields as three rows, for fdctQuantAVX2.
type quantTable struct {
	div [64]divisor
	vec [3][64]uint32
}

func newQuantTable(q *[64]uint16) *quantTable {
	var t quantTable
	for k := range 64 {
		d := newDivisor(uint32(q[zigzag[k]]) << 3)
		t.div[k] = d
		t.vec[0][k], t.vec[1][k], t.vec[2][k] = d.recip, d.corr, d.shift
	}
	return &t
}

// quantize is libjpeg-turbo's quantize (and jsimd_quantize, which gives
// the same): each coefficient of ws (natural order) divided by its
// divisor with rounding, written in zigzag order to out. It returns a
// mask with bit k set where out[k] is nonzero.
func quantize(ws *[64]int32, t *quantTable, out *[64]int16) uint64 {
	var mask uint64
	for k := range 64 {
		v := ws[zigzag[k]&63]
		d := &t.div[k]
		neg := v >> 31 // 0 or -1
		a := uint32((v ^ neg) - neg)
		// ((a + corr) · recip) >> shift, as one multiply by a
		// pre-shifted reciprocal and a constant shift.
		p := int32((uint64(a+d.corr) * d.mult) >> 32)
		out[k] = int16((p ^ neg) - neg)
		mask |= uint64(uint32(-p)>>31) << k
	}
	return mask
}

// fdctQuantGo is fdct of the 8×8 samples at src[off:] followed by
// quantize into out (zigzag order), with ws as scratch; it returns
// quantize's mask of nonzero coefficients.
func fdctQuantGo(src []byte, off, stride int, t *quantTable, ws *[64]int32, out *[64]int16) uint64 {
	fdct(src, off, stride, ws)
	return quantize(ws, t, out)
}
