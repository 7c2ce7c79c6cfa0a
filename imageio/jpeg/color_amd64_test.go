//go:build !noasm && amd64

package jpeg

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The colour kernels against their pure-Go twins: the conversions on
// every input triple, the resampling on random rows of every width up to
// 70 and some large ones, with sentinels after the outputs and random
// bytes after the inputs (rows of planes of odd strides), so that a
// kernel that wrote or read past a row would show.

// guarded returns a slice of n bytes with pad sentinel bytes either side,
// and a check that the sentinels are intact.
func guarded(n, pad int) ([]byte, func() bool) {
	buf := bytes.Repeat([]byte{0xa5}, n+2*pad)
	return buf[pad : pad+n : pad+n], func() bool {
		for _, v := range append(buf[:pad:pad], buf[pad+n:]...) {
			if v != 0xa5 {
				return false
			}
		}
		return true
	}
}

// randRows fills a plane of rows of the given stride (samples past a
// row's width are the next row's) with random or extreme samples.
func randRows(rng *rand.Rand, rows, stride, kind int) []byte {
	p := make([]byte, rows*stride+stride)
	for i := range p {
		switch kind % 4 {
		case 0, 1:
			p[i] = byte(rng.IntN(256))
		case 2:
			p[i] = byte(255 * rng.IntN(2))
		case 3:
			p[i] = byte(rng.IntN(4)) + byte(252*rng.IntN(2))
		}
	}
	return p
}

// TestYCCToRGBAVX2All: every Y, Cb, Cr triple through yccToRGBAVX2 and
// through yccH2V2AVX2 (with chroma rows of one value, which upsample to
// it), against yccToRGBGo.
func TestYCCToRGBAVX2All(t *testing.T) {
	needAVX2(t)
	y, cb, cr := make([]byte, 256), make([]byte, 256), make([]byte, 256)
	for i := range y {
		y[i] = byte(i)
	}
	bRow, rRow := make([]byte, 130), make([]byte, 130)
	want, got, fused := make([]byte, 768), make([]byte, 768), make([]byte, 768)
	for b := range 256 {
		for r := range 256 {
			for i := range cb {
				cb[i], cr[i] = byte(b), byte(r)
			}
			for i := range bRow {
				bRow[i], rRow[i] = byte(b), byte(r)
			}
			yccToRGBGo(want, y, cb, cr, 256)
			yccToRGBAVX2(&got[0], &y[0], &cb[0], &cr[0], 8)
			yccH2V2AVX2(&fused[0], &y[0], &bRow[1], &bRow[1], &rRow[1], &rRow[1], 8)
			if !bytes.Equal(got, want) || !bytes.Equal(fused, want) {
				for x := range 256 {
					if w := want[3*x : 3*x+3]; !bytes.Equal(got[3*x:3*x+3], w) || !bytes.Equal(fused[3*x:3*x+3], w) {
						t.Fatalf("Y %d Cb %d Cr %d: %v, fused %v, want %v", x, b, r, got[3*x:3*x+3], fused[3*x:3*x+3], w)
					}
				}
			}
		}
	}
}

// TestRGBToYCCAVX2All: every RGB triple, against rgbToYCCGo.
func TestRGBToYCCAVX2All(t *testing.T) {
	needAVX2(t)
	const w = 4096
	src := make([]byte, 3*w)
	var want, got [3][]byte
	for c := range 3 {
		want[c], got[c] = make([]byte, w), make([]byte, w)
	}
	for row := range 1 << 24 / w {
		for x := range w {
			v := row*w + x
			src[3*x], src[3*x+1], src[3*x+2] = byte(v>>16), byte(v>>8), byte(v)
		}
		rgbToYCCGo(want[0], want[1], want[2], src, w)
		rgbToYCCAVX2(&got[0][0], &got[1][0], &got[2][0], &src[0], w/32)
		for c := range 3 {
			if !bytes.Equal(got[c], want[c]) {
				for x := range w {
					if got[c][x] != want[c][x] {
						t.Fatalf("RGB %v: component %d is %d, want %d", src[3*x:3*x+3], c, got[c][x], want[c][x])
					}
				}
			}
		}
	}
}

// widths are the row widths the resampling tests take: 1…70, then some
// around multiples of the chunks and large ones.
func widths() []int {
	var ws []int
	for w := 1; w <= 70; w++ {
		ws = append(ws, w)
	}
	return append(ws, 95, 96, 97, 127, 128, 129, 255, 256, 1023, 1024, 1025, 2047, 2048, 4097)
}

func TestYCCH2V2AVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, dw := range widths() {
		if dw < 3 {
			continue
		}
		for k := range 8 {
			w := 2*dw - k%2
			stride := dw + 1 + 2*rng.IntN(4) // odd excess: the next row's samples follow
			bp, rp := randRows(rng, 2, stride, k), randRows(rng, 2, stride, k+1)
			yp := randRows(rng, 1, w+3, k)
			want := make([]byte, 3*w)
			got, ok := guarded(3*w, 64)
			bN, bF, rN, rF := bp[:], bp[stride:], rp[:], rp[stride:]
			if k&2 != 0 {
				bN, bF = bF, bN
			}
			yccH2V2Go(want, yp, bN, bF, rN, rF, dw, w)
			yccH2V2(got, yp, bN, bF, rN, rF, dw, w)
			if !ok() {
				t.Fatalf("dw %d, w %d: wrote outside the row", dw, w)
			}
			if !bytes.Equal(got, want) {
				for x := range w {
					if !bytes.Equal(got[3*x:3*x+3], want[3*x:3*x+3]) {
						t.Fatalf("dw %d, w %d: pixel %d is %v, want %v", dw, w, x, got[3*x:3*x+3], want[3*x:3*x+3])
					}
				}
			}
		}
	}
}

func TestColorRowsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(10, 10))
	for _, w := range widths() {
		for k := range 4 {
			name := fmt.Sprintf("width %d, kind %d", w, k)
			// YCbCr → RGB.
			stride := w + 1 + 2*rng.IntN(4)
			p := randRows(rng, 3, stride, k)
			y, cb, cr := p, p[stride:], p[2*stride:]
			want := make([]byte, 3*w)
			got, ok := guarded(3*w, 64)
			yccToRGBGo(want, y, cb, cr, w)
			yccToRGB(got, y, cb, cr, w)
			if !ok() || !bytes.Equal(got, want) {
				t.Fatalf("yccToRGB, %s: differs or wrote outside", name)
			}
			// RGB → YCbCr.
			src := randRows(rng, 1, 3*w+5, k)
			var wantC [3][]byte
			var gotC [3][]byte
			var oks [3]func() bool
			for c := range 3 {
				wantC[c] = make([]byte, w)
				gotC[c], oks[c] = guarded(w, 64)
			}
			rgbToYCCGo(wantC[0], wantC[1], wantC[2], src, w)
			rgbToYCC(gotC[0], gotC[1], gotC[2], src, w)
			for c := range 3 {
				if !oks[c]() || !bytes.Equal(gotC[c], wantC[c]) {
					t.Fatalf("rgbToYCC, %s: component %d differs or wrote outside", name, c)
				}
			}
			// h2v1 fancy upsampling of a row of w > 2 samples.
			if w > 2 {
				stride = w + 1 + 2*rng.IntN(4)
				p = randRows(rng, 1, stride, k)
				wantU := make([]byte, 2*w)
				gotU, okU := guarded(2*w, 64)
				upH2V1Go(wantU, p, w)
				upH2V1(gotU, p, w)
				if !okU() || !bytes.Equal(gotU, wantU) {
					t.Fatalf("upH2V1, %s: %v, want %v", name, gotU, wantU)
				}
			}
			// h2v2 downsampling of two rows of 2·w samples.
			stride = 2*w + 1 + 2*rng.IntN(4)
			p = randRows(rng, 2, stride, k)
			wantD := make([]byte, w)
			gotD, okD := guarded(w, 64)
			downH2V2Go(wantD, p, p[stride:], w)
			downH2V2(gotD, p, p[stride:], w)
			if !okD() || !bytes.Equal(gotD, wantD) {
				t.Fatalf("downH2V2, %s: %v, want %v", name, gotD, wantD)
			}
		}
	}
}
