//go:build !noasm && amd64

package jpeg

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The AVX2 kernels against their pure-Go twins, on the inputs of the
// reference tests and on the edges of the kernels' ranges.

func needAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("the CPU lacks AVX2")
	}
}

// idctPass1Forms returns the first pass of idctGo on one column as the
// linear forms it is (before the descale): forms[j][k] is output j's
// factor of the dequantized coefficient of row k.
func idctPass1Forms() (forms [8][8]int64) {
	for k := range 8 {
		var x [8]int64
		x[k] = 1
		z1 := (x[2] + x[6]) * fix0_541196100
		tmp2 := z1 - x[6]*fix1_847759065
		tmp3 := z1 + x[2]*fix0_765366865
		tmp0 := (x[0] + x[4]) << constBits
		tmp1 := (x[0] - x[4]) << constBits
		tmp10, tmp13, tmp11, tmp12 := tmp0+tmp3, tmp0-tmp3, tmp1+tmp2, tmp1-tmp2
		t0, t1, t2, t3 := x[7], x[5], x[3], x[1]
		z1, z2, z3, z4 := t0+t3, t1+t2, t0+t2, t1+t3
		z5 := (z3 + z4) * fix1_175875602
		t0 *= fix0_298631336
		t1 *= fix2_053119869
		t2 *= fix3_072711026
		t3 *= fix1_501321110
		z1 *= -fix0_899976223
		z2 *= -fix2_562915447
		z3 = z3*-fix1_961570560 + z5
		z4 = z4*-fix0_390180644 + z5
		t0 += z1 + z3
		t1 += z2 + z4
		t2 += z2 + z3
		t3 += z1 + z4
		out := [8]int64{tmp10 + t3, tmp11 + t2, tmp12 + t1, tmp13 + t0, tmp13 - t0, tmp12 - t1, tmp11 - t2, tmp10 - t3}
		for j := range 8 {
			forms[j][k] = out[j]
		}
	}
	return forms
}

// TestIDCTBound: below the bound idctAVX2 takes (all |coef·q| < 2^15),
// the first pass's sums, rounding included, fit in int32, so that its
// 32-bit lanes give idctGo's values (the second pass needs only the low
// 28 bits of its sums, which wrap-around arithmetic keeps).
func TestIDCTBound(t *testing.T) {
	var worst int64
	for _, f := range idctPass1Forms() {
		var l1 int64
		for _, c := range f {
			l1 += max(c, -c)
		}
		worst = max(worst, l1)
	}
	const bound = 1 << 15
	if m := (bound-1)*worst + 1<<(constBits-pass1Bits-1); m >= 1<<31 {
		t.Fatalf("bound %d: sums reach %d", bound, m)
	}
	t.Logf("largest first-pass sum below the bound: %d of 2^31", (bound-1)*worst)
}

func TestIDCTAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(7, 7))
	var taken, declined int
	for n := range 300000 {
		var coef [64]int16
		var q [64]uint16
		switch k := n % 7; {
		case k < 4:
			coef, q = randomBlock(rng, k)
		case k == 4: // dequantized values up to the bound, either side
			for i := range 64 {
				q[i] = uint16(1 + rng.IntN(8))
				lim := (1<<15 - 1) / int(q[i])
				switch rng.IntN(3) {
				case 0:
					coef[i] = int16(lim)
				case 1:
					coef[i] = int16(-lim)
				default:
					coef[i] = int16(rng.IntN(2*lim+1) - lim)
				}
			}
		case k == 5: // one coefficient just past the bound
			for i := range 64 {
				q[i] = 1
				coef[i] = int16(rng.IntN(2001) - 1000)
			}
			i := rng.IntN(64)
			q[i], coef[i] = 2, int16(1<<14+rng.IntN(3))
			if rng.IntN(2) == 0 {
				coef[i] = -coef[i]
			}
		case k == 6: // sparse: columns or rows of zeros
			for i := range 64 {
				q[i] = uint16(1 + rng.IntN(100))
				if rng.IntN(8) == 0 {
					coef[i] = int16(rng.IntN(201) - 100)
				}
			}
		}
		var qi [64]int32
		for i := range 64 {
			qi[i] = int32(int16(q[i]))
		}
		const stride, off = 21, 5
		want := bytes.Repeat([]byte{0xa5}, stride*10)
		idctGo(&coef, &qi, want, off+stride, stride)
		got := bytes.Repeat([]byte{0xa5}, stride*10)
		if idctAVX2(&coef, &qi, &got[off+stride], stride) {
			taken++
			if !bytes.Equal(got, want) {
				t.Fatalf("block %d (kind %d):\n got %v\nwant %v\ncoef %v\nq %v", n, n%7, got, want, coef, q)
			}
		} else {
			declined++
			var big bool
			for i := range 64 {
				d := int64(coef[i]) * int64(int16(q[i]))
				big = big || int32(d) >= 1<<15 || int32(d) <= -(1<<15)
			}
			if !big {
				t.Fatalf("block %d: declined, with every |coef·q| below 2^15", n)
			}
			if !bytes.Equal(got, bytes.Repeat([]byte{0xa5}, stride*10)) {
				t.Fatalf("block %d: declined, having written", n)
			}
		}
	}
	t.Logf("%d blocks transformed, %d declined", taken, declined)
}

func TestFDCTQuantAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(8, 8))
	var tabs []*quantTable
	for _, quality := range []int{1, 10, 50, 75, 90, 95, 100} {
		l, c := scaledQuant(0, quality), scaledQuant(1, quality)
		tabs = append(tabs, newQuantTable(&l), newQuantTable(&c))
	}
	for n := range 300000 {
		var q [64]uint16
		t0 := tabs[n%len(tabs)]
		if n%3 == 0 {
			for i := range q {
				q[i] = uint16(1 + rng.IntN(255))
				if n%9 == 0 {
					q[i] = uint16(1 + rng.IntN(2))
				}
			}
			t0 = newQuantTable(&q)
		}
		const stride, off = 19, 3
		src := make([]byte, stride*8+off)
		for i := range src {
			switch n % 5 {
			case 0:
				src[i] = uint8(rng.IntN(256))
			case 1:
				src[i] = uint8(255 * rng.IntN(2))
			case 2:
				src[i] = uint8(n%200 + i%stride + i/stride)
			case 3:
				src[i] = uint8(n % 256)
			case 4: // the signs of a basis function: every extreme output
				u, v := n/5%8, n/40%8
				x, y := (i-off)%stride, (i-off)/stride
				s := cosSign(u, x) * cosSign(v, y)
				src[i] = uint8(127 + 128*s)
				if n/320%2 == 1 {
					src[i] = uint8(128 - 128*s)
				}
			}
		}
		var ws [64]int32
		var want, got [64]int16
		wantMask := fdctQuantGo(src, off, stride, t0, &ws, &want)
		gotMask := fdctQuantAVX2(&src[off], stride, &t0.vec, &got)
		if got != want || gotMask != wantMask {
			t.Fatalf("block %d: %v mask %x,\nwant %v mask %x", n, got, gotMask, want, wantMask)
		}
	}
}

// cosSign is the sign (±1) of cos((2x+1)uπ/16), +1 where it is zero or x
// is outside the block.
func cosSign(u, x int) int {
	if x < 0 || x > 7 {
		return 1
	}
	// cos is negative where (2x+1)u mod 32 lies in (8, 24).
	if m := (2*x + 1) * u % 32; m > 8 && m < 24 {
		return -1
	}
	return 1
}
