package jpeg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchImage is a photograph-like h×w image of c channels: smooth shapes
// and ±8 noise (imageio's benchPhoto).
func benchImage(h, w, c int) *Image {
	rng := rand.New(rand.NewPCG(5, 5))
	img := &Image{Width: w, Height: h, Channels: c, Pix: make([]byte, h*w*c)}
	for y := range h {
		for x := range w {
			for k := range c {
				v := 128 + 60*math.Sin(float64(x)/97+float64(k)) + 50*math.Cos(float64(y)/61-float64(k)) + float64(rng.IntN(17)-8)
				img.Pix[(y*w+x)*c+k] = uint8(max(0, min(255, v)))
			}
		}
	}
	return img
}

func BenchmarkEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		img  *Image
	}{{"rgb2048", benchImage(2048, 2048, 3)}, {"gray512", benchImage(512, 512, 1)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.img.Pix)))
			var buf []byte
			for b.Loop() {
				buf, _ = AppendEncode(buf[:0], tc.img, &Options{Quality: 95})
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, tc := range []struct {
		name string
		img  *Image
	}{{"rgb2048", benchImage(2048, 2048, 3)}, {"gray512", benchImage(512, 512, 1)}} {
		data, err := AppendEncode(nil, tc.img, &Options{Quality: 95})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.img.Pix)))
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Kernels, per 8×8 block or per 2048-pixel row.

func BenchmarkFDCT(b *testing.B) {
	img := benchImage(8, 8, 1)
	var ws [64]int32
	for b.Loop() {
		fdct(img.Pix, 0, 8, &ws)
	}
}

func BenchmarkQuantize(b *testing.B) {
	img := benchImage(8, 8, 1)
	var ws [64]int32
	fdct(img.Pix, 0, 8, &ws)
	q := scaledQuant(0, 95)
	t := newQuantTable(&q)
	var out [64]int16
	for b.Loop() {
		quantize(&ws, t, &out)
	}
}

func BenchmarkIDCT(b *testing.B) {
	img := benchImage(8, 8, 1)
	var ws [64]int32
	fdct(img.Pix, 0, 8, &ws)
	q := scaledQuant(0, 95)
	var zz [64]int16
	quantize(&ws, newQuantTable(&q), &zz)
	var blk [64]int16
	var qi [64]int32
	for k := range 64 {
		blk[zigzag[k]] = zz[k]
		qi[k] = int32(q[k])
	}
	dst := make([]byte, 64)
	for b.Loop() {
		idct(&blk, &qi, dst, 0, 8)
	}
}

func BenchmarkRGBToYCC(b *testing.B) {
	img := benchImage(1, 2048, 3)
	y, cb, cr := make([]byte, 2048), make([]byte, 2048), make([]byte, 2048)
	for b.Loop() {
		rgbToYCC(y, cb, cr, img.Pix, 2048)
	}
}

func BenchmarkYCCToRGB(b *testing.B) {
	img := benchImage(3, 2048, 1)
	out := make([]byte, 3*2048)
	for b.Loop() {
		yccToRGB(out, img.Pix, img.Pix[2048:], img.Pix[4096:], 2048)
	}
}

func BenchmarkUpH2V2(b *testing.B) {
	img := benchImage(2, 1024, 1)
	out := make([]byte, 2048)
	for b.Loop() {
		upH2V2(out, img.Pix, img.Pix[1024:], 1024)
	}
}
