package zarr

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestUnshuffle: unshuffleBytes (SSE2 on amd64, the twins with noasm or
// elsewhere) equals the byte-at-a-time reference for every element size
// and many lengths (whole vectors, tails, a partial last element),
// writes nothing past its block (guard bytes), and shuffleBytes undoes it.
func TestUnshuffle(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	const guard = 0xA5
	for _, typesize := range []int{1, 2, 3, 4, 8} {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 4096, 4099} {
			for extra := range min(typesize, 3) {
				name := fmt.Sprintf("typesize %d, %d elements + %d bytes", typesize, n, extra)
				src := make([]byte, n*typesize+extra)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				want := make([]byte, len(src))
				unshuffleGeneric(want, src, typesize)
				copy(want[n*typesize:], src[n*typesize:])
				if n > 0 && typesize > 1 && want[1] != src[n] {
					t.Fatalf("%s: the reference put %#x as element 0's byte 1, want the second row's first %#x", name, want[1], src[n])
				}
				buf := bytes.Repeat([]byte{guard}, len(src)+64)
				got := buf[:len(src)]
				unshuffleBytes(got, src, typesize)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: unshuffled bytes differ from the reference", name)
				}
				for i, v := range buf[len(src):] {
					if v != guard {
						t.Fatalf("%s: byte %d past the block written", name, i)
					}
				}
				back := make([]byte, len(src))
				shuffleBytes(back, got, typesize)
				if !bytes.Equal(back, src) {
					t.Fatalf("%s: shuffleBytes does not undo unshuffleBytes", name)
				}
			}
		}
	}
}

// TestUnshuffleTwins: the SSE2 paths and the pure-Go twins give the same
// bytes, both ways (on other platforms both are the twin).
func TestUnshuffleTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	for _, n := range []int{16, 48, 1000, 1 << 16} {
		rows := make([][]byte, 4)
		for j := range rows {
			rows[j] = make([]byte, n)
			for i := range rows[j] {
				rows[j][i] = byte(rng.Uint32())
			}
		}
		a, b := make([]byte, 2*n), make([]byte, 2*n)
		unshuffle2(a, rows[0], rows[1])
		unshuffle2Go(b, rows[0], rows[1])
		if !bytes.Equal(a, b) {
			t.Errorf("%d elements of 2 bytes: unshuffle2 differs from its twin", n)
		}
		a, b = make([]byte, 4*n), make([]byte, 4*n)
		unshuffle4(a, rows[0], rows[1], rows[2], rows[3])
		unshuffle4Go(b, rows[0], rows[1], rows[2], rows[3])
		if !bytes.Equal(a, b) {
			t.Errorf("%d elements of 4 bytes: unshuffle4 differs from its twin", n)
		}
		for size, src := range map[int][]byte{2: a[:2*n], 4: a} {
			got, want := make([][]byte, size), make([][]byte, size)
			for j := range size {
				got[j], want[j] = make([]byte, n), make([]byte, n)
			}
			if size == 2 {
				shuffle2(got[0], got[1], src)
				shuffle2Go(want[0], want[1], src)
			} else {
				shuffle4(got[0], got[1], got[2], got[3], src)
				shuffle4Go(want[0], want[1], want[2], want[3], src)
			}
			for j := range size {
				if !bytes.Equal(got[j], want[j]) {
					t.Errorf("%d elements of %d bytes: shuffle%d's row %d differs from its twin's", n, size, size, j)
				}
			}
		}
	}
}

// BenchmarkShuffles: one 512 KiB blosc block (c-blosc's for a default
// zarr-python chunk of float32) of uint16 and float32, each way, byte
// and bit shuffles.
func BenchmarkShuffles(b *testing.B) {
	for _, way := range []struct {
		name string
		f    func(dst, src []byte, typesize int)
	}{{"unshuffle", unshuffleBytes}, {"shuffle", shuffleBytes},
		{"bitunshuffle", func(dst, src []byte, ts int) { bitUnshuffle(dst, src, ts, 2) }},
		{"bitshuffle", func(dst, src []byte, ts int) { bitShuffle(dst, src, ts, 2) }}} {
		for _, typesize := range []int{2, 4} {
			b.Run(fmt.Sprint(way.name, typesize), func(b *testing.B) {
				src, dst := make([]byte, 1<<19), make([]byte, 1<<19)
				for i := range src {
					src[i] = byte(i * 7)
				}
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					way.f(dst, src, typesize)
				}
			})
		}
	}
}

// TestBloscInto: blosc encodes into the buffer it is given and decodes
// into the chunk's memory (no buffer of its own, no copy), and the bytes
// come back — with LZ4 and shuffle, zarr-python's default, on float32
// data that compresses and on noise that does not (stored raw).
func TestBloscInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	c := bloscCodec{cname: "lz4", clevel: 5, shuffle: ByteShuffle, typesize: 4, blocksize: 1 << 16}
	for _, noise := range []bool{false, true} {
		src := make([]byte, 1<<20+12)
		for i := range src {
			if noise || i%4 == 3 {
				src[i] = byte(rng.Uint32())
			}
		}
		into := make([]byte, encodeBound(len(src)))
		enc, err := c.encodeInto(src, into)
		if err != nil {
			t.Fatal(err)
		}
		if &enc[0] != &into[0] {
			t.Errorf("noise %v: encoded into a buffer of its own, not the one given", noise)
		}
		dst := make([]byte, len(src))
		dec, err := c.decodeInto(enc, dst, len(src))
		if err != nil {
			t.Fatal(err)
		}
		if &dec[0] != &dst[0] {
			t.Errorf("noise %v: decoded into a buffer of its own", noise)
		}
		if !bytes.Equal(dec, src) {
			t.Errorf("noise %v: the bytes do not come back", noise)
		}
		if plain, _ := c.encode(src); !bytes.Equal(plain, enc) {
			t.Errorf("noise %v: encodeInto's bytes differ from encode's", noise)
		}
	}
}

// bitUnshuffleRef is bitUnshuffle a bit at a time, as the bitshuffle
// library's layout reads.
func bitUnshuffleRef(dst, src []byte, typesize int, version byte) {
	n := bitElements(len(src), typesize, version)
	clear(dst[:n*typesize])
	rowBytes := n / 8
	for j := range typesize {
		for k := range 8 {
			row := src[(j*8+k)*rowBytes : (j*8+k+1)*rowBytes]
			for i := range n {
				dst[i*typesize+j] |= (row[i>>3] >> (i & 7) & 1) << k
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// TestBitUnshuffle: the word-transposing bit unshuffle equals the bit at
// a time reference for several element sizes, lengths (tails and
// partial elements) and both format versions, and bitShuffle undoes it.
func TestBitUnshuffle(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 5))
	if got := transpose8x8(0x0000000000000001<<9 | 1<<(8*3+5)); got != 1<<(8*1+1)|1<<(8*5+3) {
		t.Fatalf("transpose8x8 moves bits (1,1) and (3,5) to %#x, want (1,1) and (5,3)", got)
	}
	for _, typesize := range []int{1, 2, 4, 8, 3} {
		for _, n := range []int{0, 7, 8, 9, 64, 100, 4096} {
			for _, version := range []byte{2, 3} {
				src := make([]byte, n*typesize+typesize/2)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				want, got := make([]byte, len(src)), make([]byte, len(src))
				bitUnshuffleRef(want, src, typesize, version)
				bitUnshuffle(got, src, typesize, version)
				if !bytes.Equal(got, want) {
					t.Fatalf("typesize %d, %d elements, version %d: differs from the reference", typesize, n, version)
				}
				back := make([]byte, len(src))
				bitShuffle(back, got, typesize, version)
				if n := bitElements(len(src), typesize, version); !bytes.Equal(back[:n*typesize], src[:n*typesize]) {
					t.Fatalf("typesize %d, %d elements, version %d: bitShuffle does not undo it", typesize, n, version)
				}
			}
		}
	}
}
