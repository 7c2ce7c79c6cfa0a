package tiff

import (
	"github.com/ndconv/ndconv/internal/fuzzcorpus"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// fuzzSeeds are the inputs written to testdata/fuzz/FuzzRead by
// go test -run TestFuzzCorpus -update: small valid files of several kinds
// (both byte orders, every compression and predictor, tiles, separate
// planes, MinIsWhite) and a few broken ones.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, name := range []string{
		"lt-u1-c0-p1-lzw-strip-le", "lt-i2-c0-p1-lzw-pred-strip-be", "lt-u1-c3-p1-packbits-strip-le",
		"lt-f4-c0-p1-lzw-fpred-strip-le", "lt-f8-c0-p1-zlib-fpred-strip-be", "tf-u1-c2-p1-deflate-pred-strip-be",
		"tf-i1-c3-p1-none-sep-strip-le", "tf-miniswhite-u1-c2", "tf-f2-c0-p1-none-strip-le", "err-bilevel",
	} {
		seeds["seed-"+name] = readRef(t, name)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	tiled := grayPage(3, 5).with(tagRowsPerStrip, 0).with(tagStripOffsets, 0).with(tagStripByteCounts, 0).
		with(tagTileWidth, typeLong, 16).with(tagTileLength, typeLong, 16).with(tagTileOffsets, typeLong, 0).
		with(tagTileByteCounts, typeLong, 256)
	tiled.data = make([]byte, 256)
	seeds["seed-tiled"] = buildTIFF([]testPage{tiled})
	lzw := writeBytes(t, Image{randArray(t, rng, nd.Int32, 2, 3, 4), 0}, Options{LZW, true})
	seeds["seed-write-lzw-truncated"] = lzw[:len(lzw)-5]
	seeds["seed-write-deflate-rgba"] = writeBytes(t, Image{randArray(t, rng, nd.Uint16, 2, 2, 4), 4}, Options{Deflate, false})
	huge := grayPage(1, 1).with(tagImageWidth, typeLong, 1<<16).with(tagImageLength, typeLong, 1<<15).with(tagRowsPerStrip, typeLong, 1<<15)
	seeds["seed-huge-claim"] = buildTIFF([]testPage{huge})
	loop := buildTIFF([]testPage{grayPage(2, 2), grayPage(2, 2)})
	patchNext(loop, 1, 8)
	seeds["seed-loop"] = loop
	return seeds
}

// patchNext points the next-IFD offset of IFD index of a little-endian
// classic TIFF at off.
func patchNext(b []byte, index int, off uint32) {
	s := &source{r: strings.NewReader(string(b)), size: int64(len(b)), metaBudget: 1 << 20}
	pos, _ := s.readHeader()
	for i := 0; ; i++ {
		n := uint64(s.order.Uint16(b[pos:]))
		at := pos + 2 + 12*n
		if i == index {
			s.order.PutUint32(b[at:], off)
			return
		}
		pos = uint64(s.order.Uint32(b[at:]))
	}
}

// TestFuzzCorpus checks that the committed seed corpus is up to date (run
// with -update to rewrite it).
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, "FuzzRead", fuzzSeeds(t), *update)
}

// FuzzRead checks that no input makes Read panic, that errors are the
// package's typed errors, and that whatever is read is written and read
// back unchanged.
func FuzzRead(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A file may decode to 4096 times its size; larger inputs and the
		// round trip of large images would make single runs slow enough
		// to trip the fuzzer's deadline in a short CI run.
		if len(data) > 32<<10 {
			return
		}
		img, err := readBytes(data)
		if err != nil {
			checkReadError(t, err)
			return
		}
		a := img.Array
		if err := a.Check(); err != nil {
			t.Fatalf("read an invalid array: %v", err)
		}
		if limit := maxExpansion*len(data) + fileSlack; a.Len() > limit {
			t.Fatalf("%d samples from %d bytes", a.Len(), len(data))
		}
		if a.Len() > 1<<20 {
			return
		}
		back, err := readBytes(writeBytes(t, img, Options{LZW, true}))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if back.Channels != img.Channels || !sameArray(back.Array, a) {
			t.Fatal("write and re-read changed the image")
		}
	})
}
