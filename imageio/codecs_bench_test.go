package imageio

import (
	"bytes"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ndconv/ndconv/imageio/tiff"
	"github.com/ndconv/ndconv/nd"
)

// benchPhoto16 is a 16-bit gray h×w image like a scientific camera's:
// smooth shapes over the whole range plus noise of ±64, which the
// predictor and deflate or LZW find as hard as a photograph's.
func benchPhoto16(h, w int) nd.Array {
	rng := rand.New(rand.NewPCG(16, 16))
	d := make([]uint16, h*w)
	for y := range h {
		for x := range w {
			v := 32768 + 15000*math.Sin(float64(x)/97) + 12000*math.Cos(float64(y)/61) + float64(rng.IntN(129)-64)
			d[y*w+x] = uint16(max(0, min(65535, v)))
		}
	}
	return nd.Array{Shape: []int{h, w}, Data: d}
}

// codecBenchImages are the images the codec benchmarks time, with the
// TIFF channel count of each. NDCONV_CODEC_BENCH_DIR=dir writes them as
// .npy files (name.npy), and the files the benchmarks decode, so that
// bench/peers/codecs_cv2.py can time OpenCV on the same pixels and files.
func codecBenchImages(b *testing.B) []struct {
	name string
	img  tiff.Image
} {
	imgs := []struct {
		name string
		img  tiff.Image
	}{
		{"rgb8", tiff.Image{Array: benchPhoto(2048, 2048, 3), Channels: 3}},
		{"gray16", tiff.Image{Array: benchPhoto16(2048, 2048)}},
	}
	if dir := os.Getenv("NDCONV_CODEC_BENCH_DIR"); dir != "" {
		for _, im := range imgs {
			if err := WriteNPYFile(filepath.Join(dir, im.name+".npy"), im.img.Array); err != nil {
				b.Fatal(err)
			}
		}
	}
	return imgs
}

// saveBenchFile writes data as dir/name when NDCONV_CODEC_BENCH_DIR is set.
func saveBenchFile(b *testing.B, name string, data []byte) {
	if dir := os.Getenv("NDCONV_CODEC_BENCH_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTIFF times tiff.Write and tiff.Read, in memory, on a 2048²
// RGB uint8 photograph-like image and a 2048² uint16 gray one, Deflate and
// LZW with the predictor (what `ndconv … out.tif --compression` writes).
// docs/perf/codecs.md has the figures with OpenCV's beside them.
func BenchmarkTIFF(b *testing.B) {
	for _, im := range codecBenchImages(b) {
		raw := int64(im.img.Array.Len() * im.img.Array.DType().Size())
		for _, c := range []tiff.Compression{tiff.Deflate, tiff.LZW} {
			opt := tiff.Options{Compression: c, Predictor: true}
			var file bytes.Buffer
			if err := tiff.Write(&file, im.img, opt); err != nil {
				b.Fatal(err)
			}
			saveBenchFile(b, im.name+"-"+c.String()+".tif", file.Bytes())
			b.Run(im.name+"/"+c.String()+"/write", func(b *testing.B) {
				var buf bytes.Buffer
				b.SetBytes(raw)
				clock := startCPUClock()
				for b.Loop() {
					buf.Reset()
					if err := tiff.Write(&buf, im.img, opt); err != nil {
						b.Fatal(err)
					}
				}
				clock.stop(b)
				b.ReportMetric(float64(buf.Len()), "file-bytes")
			})
			b.Run(im.name+"/"+c.String()+"/read", func(b *testing.B) {
				b.SetBytes(raw)
				clock := startCPUClock()
				for b.Loop() {
					if _, err := tiff.Read(bytes.NewReader(file.Bytes()), int64(file.Len())); err != nil {
						b.Fatal(err)
					}
				}
				clock.stop(b)
			})
		}
	}
}

// BenchmarkJPEG times WriteJPEG and ReadJPEG (imageio/jpeg) at OpenCV's
// default quality (95) on the RGB image of BenchmarkTIFF (write, read)
// and on a 512² gray one, a folder run's file (gray512/…), and
// image/jpeg on the RGB image (stdlib-write, stdlib-read: the codec
// ReadJPEG and WriteJPEG used before session 33).
func BenchmarkJPEG(b *testing.B) {
	a := codecBenchImages(b)[0].img.Array
	gray := benchPhoto(512, 512, 1)
	gray.Shape = gray.Shape[:2]
	if dir := os.Getenv("NDCONV_CODEC_BENCH_DIR"); dir != "" {
		if err := WriteNPYFile(filepath.Join(dir, "gray512.npy"), gray); err != nil {
			b.Fatal(err)
		}
	}
	for _, im := range []struct {
		prefix, file string
		a            nd.Array
	}{{"", "rgb8-q95.jpg", a}, {"gray512/", "gray512-q95.jpg", gray}} {
		raw := int64(im.a.Len())
		var file bytes.Buffer
		if err := WriteJPEG(&file, im.a, 95); err != nil {
			b.Fatal(err)
		}
		saveBenchFile(b, im.file, file.Bytes())
		b.Run(im.prefix+"write", func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(raw)
			clock := startCPUClock()
			for b.Loop() {
				buf.Reset()
				if err := WriteJPEG(&buf, im.a, 95); err != nil {
					b.Fatal(err)
				}
			}
			clock.stop(b)
			b.ReportMetric(float64(buf.Len()), "file-bytes")
		})
		b.Run(im.prefix+"read", func(b *testing.B) {
			b.SetBytes(raw)
			clock := startCPUClock()
			for b.Loop() {
				if _, err := ReadJPEG(bytes.NewReader(file.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
			clock.stop(b)
		})
	}
	d := a.Data.([]uint8)
	m := image.NewRGBA(image.Rect(0, 0, 2048, 2048))
	for i := range 2048 * 2048 {
		copy(m.Pix[4*i:4*i+3], d[3*i:3*i+3])
		m.Pix[4*i+3] = 255
	}
	var std bytes.Buffer
	if err := jpeg.Encode(&std, m, &jpeg.Options{Quality: 95}); err != nil {
		b.Fatal(err)
	}
	b.Run("stdlib-write", func(b *testing.B) {
		var buf bytes.Buffer
		b.SetBytes(int64(len(d)))
		clock := startCPUClock()
		for b.Loop() {
			buf.Reset()
			if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 95}); err != nil {
				b.Fatal(err)
			}
		}
		clock.stop(b)
	})
	b.Run("stdlib-read", func(b *testing.B) {
		b.SetBytes(int64(len(d)))
		clock := startCPUClock()
		for b.Loop() {
			if _, err := jpeg.Decode(bytes.NewReader(std.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
		clock.stop(b)
	})
}

// cpuClock reports, at stop, the CPU time (user and system, all threads)
// the process spent per operation since it was made, as cpu-ms/op: on a
// shared machine the work done, which waiting for a core does not inflate
// as it does the wall time.
type cpuClock struct{ start time.Duration }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPUClock() cpuClock { return cpuClock{cpuTime()} }

func (c cpuClock) stop(b *testing.B) {
	b.ReportMetric(float64(cpuTime()-c.start)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkReadPeerFiles times ndconv reading the files OpenCV wrote
// (bench/peers/codecs_cv2.py leaves them in NDCONV_CODEC_BENCH_DIR as
// cv2-*.tif, cv2-*.jpg and cv2-*.png): decoding the same file as
// cv2.imdecode.
func BenchmarkReadPeerFiles(b *testing.B) {
	dir := os.Getenv("NDCONV_CODEC_BENCH_DIR")
	if dir == "" {
		b.Skip("NDCONV_CODEC_BENCH_DIR is not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "cv2-*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		ext := filepath.Ext(f)
		if ext != ".tif" && ext != ".jpg" && ext != ".png" {
			continue
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			clock := startCPUClock()
			for b.Loop() {
				var err error
				switch ext {
				case ".tif":
					_, err = tiff.Read(bytes.NewReader(data), int64(len(data)))
				case ".png":
					_, err = ReadPNG(bytes.NewReader(data))
				default:
					_, err = ReadJPEG(bytes.NewReader(data))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			clock.stop(b)
		})
	}
}
