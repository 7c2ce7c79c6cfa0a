package jpeg

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The "slow but simple" references: straight ports of libjpeg-turbo's C
// (jidctint.c, jfdctint.c, jcdctmgr.c, jdsample.c, jdcolor.c,
// jccolor.c, jcsample.c), with its tables built as the C builds them,
// compared with the fast code on seeded random inputs.

// refRangeLimit is jdmaster.c prepare_range_limit_table: the table, and
// the offset of sample_range_limit in it.
func refRangeLimit() ([]uint8, int) {
	t := make([]uint8, 5*256+128)
	base := 256 // table += MAXJSAMPLE + 1
	for i := range 256 {
		t[base+i] = uint8(i)
	}
	post := base + 128
	for i := 128; i < 512; i++ {
		t[post+i] = 255
	}
	// memset(table + 2*(MAXJSAMPLE+1), 0, …) is already zero;
	copy(t[post+1024-128:], t[base:base+128])
	return t, base
}

// refIDCT is jpeg_idct_islow with JLONG = int64, int = int32, the
// quantization table as short (ISLOW_MULT_TYPE in SIMD builds).
func refIDCT(coef *[64]int16, quant *[64]uint16) [64]uint8 {
	table, base := refRangeLimit()
	rl := func(x int64) uint8 { return table[base+128+int(int32(x)&1023)] }
	descale := func(x int64, n uint) int64 { return (x + 1<<(n-1)) >> n }
	deq := func(i int) int64 { return int64(int32(coef[i]) * int32(int16(quant[i]))) }
	var ws [64]int32
	for c := range 8 {
		allZero := true
		for r := 1; r < 8; r++ {
			allZero = allZero && coef[8*r+c] == 0
		}
		if allZero {
			dc := int32(uint64(deq(c)) << 2)
			for r := range 8 {
				ws[8*r+c] = dc
			}
			continue
		}
		z2, z3 := deq(16+c), deq(48+c)
		z1 := (z2 + z3) * 4433
		tmp2 := z1 + z3*-15137
		tmp3 := z1 + z2*6270
		z2, z3 = deq(c), deq(32+c)
		tmp0 := int64(uint64(z2+z3) << 13)
		tmp1 := int64(uint64(z2-z3) << 13)
		tmp10, tmp13, tmp11, tmp12 := tmp0+tmp3, tmp0-tmp3, tmp1+tmp2, tmp1-tmp2
		tmp0, tmp1, tmp2, tmp3 = deq(56+c), deq(40+c), deq(24+c), deq(8+c)
		z1, z2, z3 = tmp0+tmp3, tmp1+tmp2, tmp0+tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * 9633
		tmp0 *= 2446
		tmp1 *= 16819
		tmp2 *= 25172
		tmp3 *= 12299
		z1 *= -7373
		z2 *= -20995
		z3 *= -16069
		z4 *= -3196
		z3 += z5
		z4 += z5
		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4
		ws[c] = int32(descale(tmp10+tmp3, 11))
		ws[56+c] = int32(descale(tmp10-tmp3, 11))
		ws[8+c] = int32(descale(tmp11+tmp2, 11))
		ws[48+c] = int32(descale(tmp11-tmp2, 11))
		ws[16+c] = int32(descale(tmp12+tmp1, 11))
		ws[40+c] = int32(descale(tmp12-tmp1, 11))
		ws[24+c] = int32(descale(tmp13+tmp0, 11))
		ws[32+c] = int32(descale(tmp13-tmp0, 11))
	}
	var out [64]uint8
	for r := range 8 {
		w := ws[8*r : 8*r+8]
		if w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0 && w[6] == 0 && w[7] == 0 {
			v := rl(descale(int64(w[0]), 5))
			for c := range 8 {
				out[8*r+c] = v
			}
			continue
		}
		z2, z3 := int64(w[2]), int64(w[6])
		z1 := (z2 + z3) * 4433
		tmp2 := z1 + z3*-15137
		tmp3 := z1 + z2*6270
		tmp0 := int64(uint64(int64(w[0])+int64(w[4])) << 13)
		tmp1 := int64(uint64(int64(w[0])-int64(w[4])) << 13)
		tmp10, tmp13, tmp11, tmp12 := tmp0+tmp3, tmp0-tmp3, tmp1+tmp2, tmp1-tmp2
		tmp0, tmp1, tmp2, tmp3 = int64(w[7]), int64(w[5]), int64(w[3]), int64(w[1])
		z1, z2, z3 = tmp0+tmp3, tmp1+tmp2, tmp0+tmp2
		z4 := tmp1 + tmp3
		z5 := (z3 + z4) * 9633
		tmp0 *= 2446
		tmp1 *= 16819
		tmp2 *= 25172
		tmp3 *= 12299
		z1 *= -7373
		z2 *= -20995
		z3 *= -16069
		z4 *= -3196
		z3 += z5
		z4 += z5
		tmp0 += z1 + z3
		tmp1 += z2 + z4
		tmp2 += z2 + z3
		tmp3 += z1 + z4
		o := out[8*r : 8*r+8]
		o[0], o[7] = rl(descale(tmp10+tmp3, 18)), rl(descale(tmp10-tmp3, 18))
		o[1], o[6] = rl(descale(tmp11+tmp2, 18)), rl(descale(tmp11-tmp2, 18))
		o[2], o[5] = rl(descale(tmp12+tmp1, 18)), rl(descale(tmp12-tmp1, 18))
		o[3], o[4] = rl(descale(tmp13+tmp0, 18)), rl(descale(tmp13-tmp0, 18))
	}
	return out
}

// randomBlock fills a block of coefficients of one of several ranges:
// a few small ones (a photograph's), all 64 up to ±2047 (8-bit data's
// extremes), any int16 (corrupt files: the range limit wraps), a DC alone.
func randomBlock(rng *rand.Rand, kind int) (coef [64]int16, q [64]uint16) {
	for i := range 64 {
		switch kind % 4 {
		case 0:
			q[i] = uint16(1 + rng.IntN(60))
			if rng.IntN(4) == 0 {
				coef[i] = int16(rng.IntN(41) - 20)
			}
		case 1:
			q[i] = uint16(1 + rng.IntN(255))
			coef[i] = int16(rng.IntN(4095) - 2047)
		case 2:
			q[i] = uint16(rng.Uint32())
			coef[i] = int16(rng.Uint32())
		case 3:
			q[i] = uint16(1 + rng.IntN(255))
			if i == 0 {
				coef[i] = int16(rng.IntN(4095) - 2047)
			}
		}
	}
	return coef, q
}

func TestIDCTReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := range 200000 {
		coef, q := randomBlock(rng, n)
		want := refIDCT(&coef, &q)
		var qi [64]int32
		for i := range 64 {
			qi[i] = int32(int16(q[i]))
		}
		// A 20-byte stride with sentinels around: nothing else is written.
		dst := bytes.Repeat([]byte{0xa5}, 20*9)
		if n%4 == 3 {
			idctDC(coef[0], qi[0], dst, 3, 20)
		} else {
			idct(&coef, &qi, dst, 3, 20)
		}
		for r := range 8 {
			if !bytes.Equal(dst[3+20*r:11+20*r], want[8*r:8*r+8]) {
				t.Fatalf("block %d (kind %d) row %d: %v, want %v", n, n%4, r, dst[3+20*r:11+20*r], want[8*r:8*r+8])
			}
		}
		for i, v := range dst {
			if (i < 3 || i%20 < 3 || i%20 >= 11 || i >= 20*8) && v != 0xa5 {
				t.Fatalf("block %d: wrote outside the block at %d", n, i)
			}
		}
	}
}

// refFDCT is jpeg_fdct_islow after convsamp, with DCTELEM = short as in
// SIMD builds.
func refFDCT(s *[64]uint8) [64]int32 {
	var d [64]int64
	for i := range 64 {
		d[i] = int64(s[i]) - 128
	}
	descale := func(x int64, n uint) int64 { return (x + 1<<(n-1)) >> n }
	short := func(x int64) int64 { return int64(int16(x)) }
	for r := range 8 {
		p := d[8*r : 8*r+8]
		tmp0, tmp7 := p[0]+p[7], p[0]-p[7]
		tmp1, tmp6 := p[1]+p[6], p[1]-p[6]
		tmp2, tmp5 := p[2]+p[5], p[2]-p[5]
		tmp3, tmp4 := p[3]+p[4], p[3]-p[4]
		tmp10, tmp13, tmp11, tmp12 := tmp0+tmp3, tmp0-tmp3, tmp1+tmp2, tmp1-tmp2
		p[0] = short((tmp10 + tmp11) << 2)
		p[4] = short((tmp10 - tmp11) << 2)
		z1 := (tmp12 + tmp13) * 4433
		p[2] = short(descale(z1+tmp13*6270, 11))
		p[6] = short(descale(z1+tmp12*-15137, 11))
		z1, z2, z3, z4 := tmp4+tmp7, tmp5+tmp6, tmp4+tmp6, tmp5+tmp7
		z5 := (z3 + z4) * 9633
		tmp4 *= 2446
		tmp5 *= 16819
		tmp6 *= 25172
		tmp7 *= 12299
		z1 *= -7373
		z2 *= -20995
		z3 = z3*-16069 + z5
		z4 = z4*-3196 + z5
		p[7] = short(descale(tmp4+z1+z3, 11))
		p[5] = short(descale(tmp5+z2+z4, 11))
		p[3] = short(descale(tmp6+z2+z3, 11))
		p[1] = short(descale(tmp7+z1+z4, 11))
	}
	for c := range 8 {
		g := func(r int) int64 { return d[8*r+c] }
		tmp0, tmp7 := g(0)+g(7), g(0)-g(7)
		tmp1, tmp6 := g(1)+g(6), g(1)-g(6)
		tmp2, tmp5 := g(2)+g(5), g(2)-g(5)
		tmp3, tmp4 := g(3)+g(4), g(3)-g(4)
		tmp10, tmp13, tmp11, tmp12 := tmp0+tmp3, tmp0-tmp3, tmp1+tmp2, tmp1-tmp2
		d[c] = short(descale(tmp10+tmp11, 2))
		d[32+c] = short(descale(tmp10-tmp11, 2))
		z1 := (tmp12 + tmp13) * 4433
		d[16+c] = short(descale(z1+tmp13*6270, 15))
		d[48+c] = short(descale(z1+tmp12*-15137, 15))
		z1, z2, z3, z4 := tmp4+tmp7, tmp5+tmp6, tmp4+tmp6, tmp5+tmp7
		z5 := (z3 + z4) * 9633
		tmp4 *= 2446
		tmp5 *= 16819
		tmp6 *= 25172
		tmp7 *= 12299
		z1 *= -7373
		z2 *= -20995
		z3 = z3*-16069 + z5
		z4 = z4*-3196 + z5
		d[56+c] = short(descale(tmp4+z1+z3, 15))
		d[40+c] = short(descale(tmp5+z2+z4, 15))
		d[24+c] = short(descale(tmp6+z2+z3, 15))
		d[8+c] = short(descale(tmp7+z1+z4, 15))
	}
	var out [64]int32
	for i := range 64 {
		out[i] = int32(d[i])
	}
	return out
}

func TestFDCTReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for n := range 200000 {
		var s [64]uint8
		for i := range s {
			switch n % 4 {
			case 0:
				s[i] = uint8(rng.IntN(256))
			case 1: // extremes only
				s[i] = uint8(255 * rng.IntN(2))
			case 2: // a smooth ramp
				s[i] = uint8(n%200 + i%8 + i/8)
			case 3: // constant
				s[i] = uint8(n % 256)
			}
		}
		want := refFDCT(&s)
		src := make([]byte, 13*8)
		for r := range 8 {
			copy(src[13*r+2:], s[8*r:8*r+8])
		}
		var got [64]int32
		fdct(src, 2, 13, &got)
		if got != want {
			t.Fatalf("block %d: %v, want %v", n, got, want)
		}
	}
}

// refQuantize is jcdctmgr.c quantize (8-bit, reciprocal) with
// compute_reciprocal, in natural order.
func refQuantize(ws *[64]int32, q *[64]uint16) [64]int16 {
	var out [64]int16
	for i := range 64 {
		d := uint32(q[i]) << 3
		b := 0
		for d>>(b+1) != 0 {
			b++
		}
		r := uint32(16 + b)
		fq, fr, c := (uint32(1)<<r)/d, (uint32(1)<<r)%d, d/2
		if fr == 0 {
			fq >>= 1
			r--
		} else if fr <= d/2 {
			c++
		} else {
			fq++
		}
		temp := ws[i]
		neg := temp < 0
		if neg {
			temp = -temp
		}
		p := (uint32(temp) + uint32(uint16(c))) * uint32(uint16(fq)) >> r
		v := int16(p)
		if neg {
			v = -v
		}
		out[i] = v
	}
	return out
}

// TestQuantizeReference: quantize is libjpeg-turbo's reciprocal
// quantization, and that is the C division with rounding, (|x| + d/2) / d,
// for every coefficient an 8-bit FDCT can give and every baseline table
// entry.
func TestQuantizeReference(t *testing.T) {
	for q := 1; q <= 255; q++ {
		div := newDivisor(uint32(q) << 3)
		d := uint32(q) << 3
		for a := uint32(0); a < 1<<15; a++ {
			got := uint32((uint64(a+div.corr) * div.mult) >> 32)
			if want := (a + d/2) / d; got != want {
				t.Fatalf("q %d: %d / %d gives %d, division %d", q, a, d, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for n := range 20000 {
		var ws [64]int32
		var q [64]uint16
		for i := range 64 {
			ws[i] = int32(rng.IntN(1<<15) - 1<<14)
			q[i] = uint16(1 + rng.IntN(255))
		}
		want := refQuantize(&ws, &q)
		var zz [64]int16
		mask := quantize(&ws, newQuantTable(&q), &zz)
		for k := range 64 {
			if zz[k] != want[zigzag[k]] || (mask>>k&1 == 1) != (zz[k] != 0) {
				t.Fatalf("block %d, zigzag %d: %d (mask %v), want %d", n, k, zz[k], mask>>k&1, want[zigzag[k]])
			}
		}
	}
}

// TestColorReference: both colour conversions, over every triple of
// samples, against the C's tables (jccolor.c rgb_ycc_start, jdcolor.c
// build_ycc_rgb_table with sample_range_limit).
func TestColorReference(t *testing.T) {
	var tab [8 * 256]int64
	fixc := func(x float64) int64 { return int64(x*65536 + 0.5) }
	for i := range int64(256) {
		tab[i] = fixc(0.299) * i
		tab[256+i] = fixc(0.587) * i
		tab[512+i] = fixc(0.114)*i + 32768
		tab[768+i] = -fixc(0.16874) * i
		tab[1024+i] = -fixc(0.33126) * i
		tab[1280+i] = fixc(0.5)*i + 128<<16 + 32767
		tab[1536+i] = -fixc(0.41869) * i
		tab[1792+i] = -fixc(0.08131) * i
	}
	src := make([]byte, 3*256)
	y, cb, cr := make([]byte, 256), make([]byte, 256), make([]byte, 256)
	rgb := make([]byte, 3*256)
	for r := range 256 {
		for g := range 256 {
			for b := range 256 {
				src[3*b], src[3*b+1], src[3*b+2] = byte(r), byte(g), byte(b)
			}
			rgbToYCC(y, cb, cr, src, 256)
			for b := range 256 {
				wy := (tab[r] + tab[256+g] + tab[512+b]) >> 16
				wb := (tab[768+r] + tab[1024+g] + tab[1280+b]) >> 16
				wr := (tab[1280+r] + tab[1536+g] + tab[1792+b]) >> 16
				if int64(y[b]) != wy || int64(cb[b]) != wb || int64(cr[b]) != wr {
					t.Fatalf("RGB %d %d %d: %d %d %d, want %d %d %d", r, g, b, y[b], cb[b], cr[b], wy, wb, wr)
				}
			}
			// YCbCr → RGB, with Y = r, Cb = g, Cr = 0…255.
			for i := range 256 {
				y[i], cb[i], cr[i] = byte(r), byte(g), byte(i)
			}
			yccToRGB(rgb, y, cb, cr, 256)
			for i := range 256 {
				x := int64(i - 128)
				xb := int64(g - 128)
				lim := func(v int64) byte { return byte(max(0, min(255, v))) }
				wr := lim(int64(r) + (fixc(1.402)*x+32768)>>16)
				wg := lim(int64(r) + ((-fixc(0.34414)*xb+32768)+(-fixc(0.71414)*x))>>16)
				wb := lim(int64(r) + (fixc(1.772)*xb+32768)>>16)
				if rgb[3*i] != wr || rgb[3*i+1] != wg || rgb[3*i+2] != wb {
					t.Fatalf("YCbCr %d %d %d: %v, want %d %d %d", r, g, i, rgb[3*i:3*i+3], wr, wg, wb)
				}
			}
		}
	}
}

// TestResampleReference: the upsamplers (and the fused 4:2:0 conversion)
// and downsamplers against the C loops, for every width 3…40 (2·dw or
// one less output pixels) on random rows.
func TestResampleReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	row := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	for n := range 2000 {
		dw := 3 + n%38
		near, far, in := row(dw), row(dw), row(dw)
		// h2v1_fancy_upsample.
		want := make([]byte, 2*dw)
		want[0], want[1] = in[0], byte((3*int(in[0])+int(in[1])+2)>>2)
		for i := 1; i < dw-1; i++ {
			v := 3 * int(in[i])
			want[2*i], want[2*i+1] = byte((v+int(in[i-1])+1)>>2), byte((v+int(in[i+1])+2)>>2)
		}
		want[2*dw-2], want[2*dw-1] = byte((3*int(in[dw-1])+int(in[dw-2])+1)>>2), in[dw-1]
		got := make([]byte, 2*dw)
		upH2V1(got, in, dw)
		if !bytes.Equal(got, want) {
			t.Fatalf("h2v1 %d: %v, want %v", dw, got, want)
		}
		// h2v2_fancy_upsample.
		sum := func(i int) int { return 3*int(near[i]) + int(far[i]) }
		want[0], want[1] = byte((sum(0)*4+8)>>4), byte((sum(0)*3+sum(1)+7)>>4)
		for i := 1; i < dw-1; i++ {
			want[2*i], want[2*i+1] = byte((sum(i)*3+sum(i-1)+8)>>4), byte((sum(i)*3+sum(i+1)+7)>>4)
		}
		want[2*dw-2], want[2*dw-1] = byte((sum(dw-1)*3+sum(dw-2)+8)>>4), byte((sum(dw-1)*4+7)>>4)
		upH2V2(got, near, far, dw)
		if !bytes.Equal(got, want) {
			t.Fatalf("h2v2 %d: %v, want %v", dw, got, want)
		}
		// The fused conversion equals upsampling then converting.
		w := 2*dw - n%2
		yrow, near2, far2 := row(w), row(dw), row(dw)
		up2 := make([]byte, 2*dw)
		upH2V2(up2, near2, far2, dw)
		wantRGB, gotRGB := make([]byte, 3*w), make([]byte, 3*w)
		yccToRGB(wantRGB, yrow, got, up2, w)
		yccH2V2(gotRGB, yrow, near, far, near2, far2, dw, w)
		if !bytes.Equal(gotRGB, wantRGB) {
			t.Fatalf("fused 4:2:0, width %d: differs", w)
		}
		// h1v2_fancy_upsample.
		for bias := 1; bias <= 2; bias++ {
			upH1V2(got, near, far, dw, bias)
			for i := range dw {
				if got[i] != byte((3*int(near[i])+int(far[i])+bias)>>2) {
					t.Fatalf("h1v2 bias %d at %d", bias, i)
				}
			}
		}
		// h2v2_downsample, h2v1_downsample, int_downsample 1×2.
		a, b := row(2*dw), row(2*dw)
		down := make([]byte, dw)
		downH2V2(down, a, b, dw)
		for i, bias := 0, 1; i < dw; i, bias = i+1, bias^3 {
			if down[i] != byte((int(a[2*i])+int(a[2*i+1])+int(b[2*i])+int(b[2*i+1])+bias)>>2) {
				t.Fatalf("h2v2 down at %d", i)
			}
		}
		downH2V1(down, a, dw)
		for i, bias := 0, 0; i < dw; i, bias = i+1, bias^1 {
			if down[i] != byte((int(a[2*i])+int(a[2*i+1])+bias)>>1) {
				t.Fatalf("h2v1 down at %d", i)
			}
		}
		downV2(down, a, b, dw)
		for i := range dw {
			if down[i] != byte((int(a[i])+int(b[i])+1)/2) {
				t.Fatalf("1x2 down at %d", i)
			}
		}
	}
}
