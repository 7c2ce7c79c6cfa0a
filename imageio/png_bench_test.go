package imageio

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// benchPhoto is an h×w×c uint8 image like a photograph: smooth shapes
// plus a little noise, so that neither the filter nor the deflate stage
// has an easy or a hopeless job. docs/perf/codecs.md times cv2.imwrite on
// the same pixels (NDCONV_PNG_BENCH_NPY=path writes them as .npy).
func benchPhoto(h, w, c int) nd.Array {
	rng := rand.New(rand.NewPCG(5, 5))
	d := make([]uint8, h*w*c)
	for y := range h {
		for x := range w {
			for k := range c {
				v := 128 + 60*math.Sin(float64(x)/97+float64(k)) + 50*math.Cos(float64(y)/61-float64(k)) + float64(rng.IntN(17)-8)
				d[(y*w+x)*c+k] = uint8(max(0, min(255, v)))
			}
		}
	}
	return nd.Array{Shape: []int{h, w, c}, Data: d}
}

func BenchmarkWritePNG(b *testing.B) {
	a := benchPhoto(2048, 2048, 3)
	if p := os.Getenv("NDCONV_PNG_BENCH_NPY"); p != "" {
		if err := WriteNPYFile(p, a); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	b.SetBytes(int64(len(a.Data.([]uint8))))
	for b.Loop() {
		buf.Reset()
		if err := WritePNG(&buf, a); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "file-bytes")
}

// BenchmarkWritePNGSmall writes a 512² gray image, a folder run's file
// (issue 27's 10,000 PNGs): per-file costs show here that a 2048² image
// hides (the encoders' deflaters and buffers, pooled since session 31:
// 3.6 ms and 3.4 MB a file before, ~1 ms and 0.15 MB after, on one core).
func BenchmarkWritePNGSmall(b *testing.B) {
	a := benchPhoto(512, 512, 1)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.SetBytes(int64(len(a.Data.([]uint8))))
	for b.Loop() {
		buf.Reset()
		if err := WritePNG(&buf, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWritePNGLevels times every zlib level on BenchmarkWritePNG's
// image (the cost of --png-compression).
func BenchmarkWritePNGLevels(b *testing.B) {
	a := benchPhoto(2048, 2048, 3)
	for level := range 10 {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(int64(len(a.Data.([]uint8))))
			for b.Loop() {
				buf.Reset()
				if err := WritePNGLevel(&buf, a, level); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "file-bytes")
		})
	}
}
