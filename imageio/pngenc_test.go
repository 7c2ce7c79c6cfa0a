package imageio

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"image/png"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// smoothImage is an image whose rows suit different filters: gradients
// across and down, flat runs and noisy patches, so that the per-row
// filter choice of levels above 1 takes each filter somewhere.
func smoothImage(rng *rand.Rand, h, w, c int, dt nd.DType) nd.Array {
	a := randomImage(rng, h, w, c, dt)
	full := 255
	if dt == nd.Uint16 {
		full = 65535
	}
	for y := range h {
		for x := range w {
			for k := range c {
				var v int
				switch (y / 3) % 4 {
				case 0:
					v = (x*37 + k*11) % (full + 1) // across: Sub
				case 1:
					v = (y*53 + k) % (full + 1) // down: Up
				case 2:
					v = ((x + y) * 29) % (full + 1) // diagonal: Paeth, Average
				default:
					continue // noise: None
				}
				i := (y*w+x)*c + k
				switch d := a.Data.(type) {
				case []uint8:
					d[i] = uint8(v)
				case []uint16:
					d[i] = uint16(v)
				}
			}
		}
	}
	return a
}

// pngFilters returns the filter type of each row of a PNG, inflating its
// IDAT chunks with compress/zlib, which also checks the Adler-32 that
// encodePNG combines from its segments'.
func pngFilters(t *testing.T, b []byte, h, rowBytes int) (filters []byte, idats int) {
	t.Helper()
	var z bytes.Buffer
	for p := 8; p+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[p:]))
		if string(b[p+4:p+8]) == "IDAT" {
			z.Write(b[p+8 : p+8+n])
			idats++
		}
		p += 12 + n
	}
	zr, err := zlib.NewReader(&z)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflating the IDAT stream: %v", err)
	}
	if len(raw) != h*(1+rowBytes) {
		t.Fatalf("inflated %d bytes, want %d rows of 1+%d", len(raw), h, rowBytes)
	}
	for y := range h {
		filters = append(filters, raw[y*(1+rowBytes)])
	}
	return filters, idats
}

// TestWritePNGLevels writes every colour type and bit depth at every
// level, with images cut into many segments and IDAT chunks, odd widths
// and single pixels, and checks that ReadPNG and image/png (directly) both
// read the samples written, that zlib inflates the stream with its
// checksum, and that the filters are those the level promises.
func TestWritePNGLevels(t *testing.T) {
	defer func(s, i int) { pngSegmentBytes, pngIDATBytes = s, i }(pngSegmentBytes, pngIDATBytes)
	rng := rand.New(rand.NewPCG(4, 4))
	seen := map[byte]bool{}
	cases := 0
	for _, dt := range []nd.DType{nd.Uint8, nd.Uint16} {
		for c := 1; c <= 4; c++ {
			for _, hw := range [][2]int{{1, 1}, {1, 7}, {9, 1}, {13, 17}, {40, 33}} {
				for _, pieces := range [][2]int{{1 << 20, 1 << 20}, {50, 7}, {1, 1}} {
					pngSegmentBytes, pngIDATBytes = pieces[0], pieces[1]
					for _, level := range []int{0, 1, 2, 5, 9} {
						a := smoothImage(rng, hw[0], hw[1], c, dt)
						if cases%2 == 0 {
							a = randomImage(rng, hw[0], hw[1], c, dt)
						}
						cases++
						name := fmt.Sprintf("%v-%dch-%dx%d-seg%d-level%d", dt, c, hw[0], hw[1], pieces[0], level)
						var buf bytes.Buffer
						if err := WritePNGLevel(&buf, a, level); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						b := buf.Bytes()
						got, err := ReadPNG(bytes.NewReader(b))
						if err != nil {
							t.Fatalf("%s: ReadPNG: %v", name, err)
						}
						if !equalArrays(got, a) {
							t.Fatalf("%s: ReadPNG reads other samples than were written", name)
						}
						if _, err := png.Decode(bytes.NewReader(b)); err != nil {
							t.Fatalf("%s: image/png: %v", name, err)
						}
						filters, idats := pngFilters(t, b, hw[0], hw[1]*c*dt.Size())
						if pieces[1] == 7 && len(b) > 200 && idats < 2 {
							t.Errorf("%s: one IDAT chunk with chunks of 7 bytes", name)
						}
						for _, f := range filters {
							seen[f] = true
							if (level == 0 && f != pngFilterNone) || (level == 1 && f != pngFilterSub) || f > pngFilterPaeth {
								t.Fatalf("%s: filter %d at level %d", name, f, level)
							}
						}
					}
				}
			}
		}
	}
	for f := range byte(5) {
		if !seen[f] {
			t.Errorf("filter %d never chosen: the heuristic is not exercised", f)
		}
	}
	t.Logf("%d images", cases)
}

func TestWritePNGLevelErrors(t *testing.T) {
	a := nd.Array{Shape: []int{2, 2}, Data: make([]uint8, 4)}
	for _, level := range []int{-1, 10} {
		var ue *UnsupportedError
		if err := WritePNGLevel(io.Discard, a, level); !errors.As(err, &ue) {
			t.Errorf("level %d: %v, want an UnsupportedError", level, err)
		}
	}
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

// TestWritePNGWriteError checks that a failing writer's error comes back,
// at any point of the file, with the workers stopped.
func TestWritePNGWriteError(t *testing.T) {
	defer func(s, i int) { pngSegmentBytes, pngIDATBytes = s, i }(pngSegmentBytes, pngIDATBytes)
	pngSegmentBytes, pngIDATBytes = 100, 64
	a := randomImage(rand.New(rand.NewPCG(1, 1)), 30, 20, 3, nd.Uint8)
	for _, n := range []int{0, 10, 40, 500, 1500} {
		if err := WritePNG(&failWriter{n: n}, a); err == nil || err.Error() != "disk full" {
			t.Errorf("failing after %d bytes: %v", n, err)
		}
	}
}

func TestAdler32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for range 300 {
		b := make([]byte, rng.IntN(200000))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		if rng.IntN(4) == 0 {
			clear(b) // long zero runs keep the sums small
		}
		k := 0
		if len(b) > 0 {
			k = rng.IntN(len(b) + 1)
		}
		got := adler32Combine(adler32.Checksum(b[:k]), adler32.Checksum(b[k:]), len(b)-k)
		if want := adler32.Checksum(b); got != want {
			t.Fatalf("split %d of %d: %08x, want %08x", k, len(b), got, want)
		}
	}
}

// TestWritePNGReusedScratch: the encoders' pooled rows, buffers and
// deflaters (and IDAT buffers) carry nothing from one image to the next:
// images of other sizes, types and levels written in between, on several
// goroutines at once, leave each image's bytes as they were.
func TestWritePNGReusedScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	type job struct {
		a     nd.Array
		level int
	}
	var jobs []job
	for i, hw := range [][2]int{{1, 1}, {37, 51}, {300, 700}, {64, 64}, {5, 2000}} {
		dt := []nd.DType{nd.Uint8, nd.Uint16}[i%2]
		for c := 1; c <= 4; c += 3 {
			for _, level := range []int{0, 1, 2, 9} {
				a := smoothImage(rng, hw[0], hw[1], c, dt)
				if (i+level)%2 == 0 {
					a = randomImage(rng, hw[0], hw[1], c, dt)
				}
				jobs = append(jobs, job{a, level})
			}
		}
	}
	encode := func(j job) []byte {
		var buf bytes.Buffer
		if err := WritePNGLevel(&buf, j.a, j.level); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := make([][]byte, len(jobs))
	for i, j := range jobs {
		want[i] = encode(j)
	}
	for round := range 3 {
		order := rng.Perm(len(jobs))
		got := make([][]byte, len(jobs))
		done := make(chan struct{})
		for w := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for k := w; k < len(order); k += 4 {
					got[order[k]] = encode(jobs[order[k]])
				}
			}()
		}
		for range 4 {
			<-done
		}
		for i := range jobs {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("round %d: image %d (%v %v, level %d) written again differs", round, i, jobs[i].a.DType(), jobs[i].a.Shape, jobs[i].level)
			}
		}
	}
}

// TestWritePNGLargePieces: pieces large enough for matchesMayWin's sample
// (a smoothed photograph, where Huffman coding wins, and a flat image with
// repeats, where the matches do) read back as written, by our reader and
// image/png, at levels 1 and 6.
func TestWritePNGLargePieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	photo := benchPhoto(400, 700, 1)
	tiles, _ := nd.New(nd.Uint8, 400, 700)
	tb := tiles.Bytes()
	for i := range tb {
		tb[i] = byte((i/700/16+i%700/16)%5*40 + rng.IntN(2))
	}
	for _, a := range []nd.Array{photo, tiles} {
		for _, level := range []int{1, 6} {
			var buf bytes.Buffer
			if err := WritePNGLevel(&buf, a, level); err != nil {
				t.Fatal(err)
			}
			got, err := ReadPNG(bytes.NewReader(buf.Bytes()))
			if err != nil || !bytes.Equal(got.Bytes(), a.Bytes()) {
				t.Fatalf("level %d: read back %v (err %v)", level, got.Shape, err)
			}
			img, err := png.Decode(bytes.NewReader(buf.Bytes()))
			if err != nil || img.Bounds().Dx() != 700 {
				t.Fatalf("level %d: image/png: %v", level, err)
			}
			t.Logf("level %d: %d bytes of %d", level, buf.Len(), len(a.Bytes()))
		}
	}
}
