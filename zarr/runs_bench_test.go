package zarr

import (
	"math/rand/v2"
	"testing"
)

// benchBlock is a block's output of 128×256×256 float32 and its first
// 128³ chunk, random values in [0, 1) (zarr-python's default codec).
func benchBlock() (region, []int, box, bloscCodec) {
	shape := []int{128, 256, 256}
	b := make([]byte, prod(shape)*4)
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < len(b); i += 4 {
		v := r.Uint32() >> 9
		b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), 0x3f
	}
	lo := []int{0, 0, 0}
	return region{b: b, strides: cStrides(shape), origin: lo}, []int{128, 128, 128}, box{lo: lo, hi: []int{128, 128, 128}}, bloscCodec{cname: "lz4", clevel: 5, shuffle: ByteShuffle, typesize: 4}
}

func BenchmarkEncodeChunkCopy(b *testing.B) {
	in, shape, w, bc := benchBlock()
	chunk := make([]byte, prod(shape)*4)
	into := make([]byte, encodeBound(len(chunk)))
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		copyBox(region{b: chunk, strides: cStrides(shape), origin: w.lo}, in, w, 4)
		if _, err := bc.encodeInto(chunk, into); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeChunkRuns(b *testing.B) {
	in, shape, w, bc := benchBlock()
	into := make([]byte, encodeBound(prod(shape)*4))
	b.SetBytes(int64(prod(shape) * 4))
	for b.Loop() {
		rs, _ := newRuns(in, w.lo, shape, w, 4)
		if _, err := bc.encodeRuns(rs, into); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShuffleChunkCopy(b *testing.B) {
	in, shape, w, _ := benchBlock()
	chunk := make([]byte, prod(shape)*4)
	tmp := make([]byte, 1<<18)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		copyBox(region{b: chunk, strides: cStrides(shape), origin: w.lo}, in, w, 4)
		for off := 0; off < len(chunk); off += len(tmp) {
			shuffleBytes(tmp, chunk[off:off+len(tmp)], 4)
		}
	}
}

func BenchmarkShuffleChunkRuns(b *testing.B) {
	in, shape, w, _ := benchBlock()
	tmp := make([]byte, 1<<18)
	n := prod(shape) * 4
	b.SetBytes(int64(n))
	for b.Loop() {
		rs, _ := newRuns(in, w.lo, shape, w, 4)
		for off := 0; off < n; off += len(tmp) {
			rs.shuffle(tmp, off, 4)
		}
	}
}

// benchEncoded is benchBlock with its chunk encoded.
func benchEncoded() (region, []int, box, []byte) {
	in, shape, w, bc := benchBlock()
	c := make([]byte, prod(shape)*4)
	copyBox(region{b: c, strides: cStrides(shape), origin: w.lo}, in, w, 4)
	enc, _ := bc.encode(c)
	return in, shape, w, enc
}

func BenchmarkDecodeChunkCopy(b *testing.B) {
	in, shape, w, enc := benchEncoded()
	chunk := make([]byte, prod(shape)*4)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if _, err := bloscDecode(enc, chunk, len(chunk)); err != nil {
			b.Fatal(err)
		}
		copyBox(in, region{b: chunk, strides: cStrides(shape), origin: w.lo}, w, 4)
	}
}

func BenchmarkDecodeChunkRuns(b *testing.B) {
	in, shape, w, enc := benchEncoded()
	b.SetBytes(int64(prod(shape) * 4))
	for b.Loop() {
		rs, _ := newRuns(in, w.lo, shape, w, 4)
		if err := bloscDecodeRuns(enc, rs); err != nil {
			b.Fatal(err)
		}
	}
}
