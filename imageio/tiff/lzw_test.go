package tiff

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"golang.org/x/image/tiff/lzw"
)

// checkLZWDecode decodes src into n bytes with lzwDecoder and with
// golang.org/x/image/tiff/lzw (the decoder it replaced, which reads
// libtiff's files) and reports where they differ: the same bytes, and an
// error from both or from neither.
func checkLZWDecode(t *testing.T, src []byte, n int) {
	t.Helper()
	want := make([]byte, n)
	r := lzw.NewReader(bytes.NewReader(src), lzw.MSB, 8)
	wantN, wantErr := io.ReadFull(r, want)
	r.Close()
	var d lzwDecoder
	got := make([]byte, n)
	gotN, gotErr := d.decode(got, src)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%d bytes of %x: lzwDecoder %d bytes, %v; x/image %d bytes, %v", n, src, gotN, gotErr, wantN, wantErr)
	}
	// On an error the bytes decoded so far may differ in how far each
	// got; those both decoded must agree.
	m := min(gotN, wantN)
	if !bytes.Equal(got[:m], want[:m]) || (gotErr == nil && gotN != wantN) {
		t.Fatalf("%d bytes of %x: lzwDecoder and x/image decode differently", n, src)
	}
}

// TestLZWDecodeCodes feeds both decoders streams of random codes of the
// right widths, so that most are valid: clear codes, codes being defined
// (KwKwK), codes past the table, end codes, full tables, streams cut
// short. NDCONV_TIFF_LZW_CASES raises the count.
func TestLZWDecodeCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	cases := envInt("NDCONV_TIFF_LZW_CASES", 300)
	for range cases {
		var e lzwEncoder
		e.out, e.width = nil, lzwMinWidth
		hi := lzwEOI
		codes := rng.IntN(6000)
		for range codes {
			var c int
			switch r := rng.IntN(100); {
			case r == 0:
				c = lzwClear
			case r < 50:
				c = rng.IntN(256)
			case r < 98 && hi > lzwFirst:
				c = lzwFirst + rng.IntN(hi-lzwFirst+1) // up to hi: the code being defined
			default:
				c = rng.IntN(1 << e.width)
			}
			if c == lzwEOI {
				c = 0
			}
			e.put(uint32(c))
			if c == lzwClear {
				e.width, hi = lzwMinWidth, lzwEOI
				continue
			}
			hi++
			if hi+1 >= 1<<e.width && e.width < 12 {
				e.width++
			}
		}
		if e.nbits > 0 {
			e.out = append(e.out, byte(e.bits<<(8-e.nbits)))
		}
		src := e.out
		if rng.IntN(4) == 0 && len(src) > 0 {
			src = src[:rng.IntN(len(src))]
		}
		checkLZWDecode(t, src, rng.IntN(4*codes+2))
	}
}

// FuzzLZWDecode checks lzwDecoder against x/image's decoder on any bytes.
func FuzzLZWDecode(f *testing.F) {
	var e lzwEncoder
	f.Add(e.encode(nil, []byte("TOBEORNOTTOBEORTOBEORNOT")), 24)
	f.Add(e.encode(nil, bytes.Repeat([]byte{1, 2, 3}, 3000)), 9000)
	f.Add([]byte{0x80, 0x00, 0x40}, 5)
	f.Fuzz(func(t *testing.T, src []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		checkLZWDecode(t, src, n)
	})
}

// envInt is the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
