package zarr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// runsCase is a chunk at lo of shape in a region (a C-order array of
// rshape whose element 0 is at origin in the array), and the box w of the
// chunk the region holds.
type runsCase struct {
	shape, lo, rshape, origin []int
	w                         box
}

// runsCases are chunks whole and cut (an array's edge, a block's halo),
// in regions of their own shape and larger, with trailing axes whole
// (merged runs) and cut, in 0 to 3 axes.
func runsCases() []runsCase {
	return []runsCase{
		{shape: []int{37}, lo: []int{0}, rshape: []int{37}, origin: []int{0}, w: box{lo: []int{0}, hi: []int{37}}},
		{shape: []int{37}, lo: []int{37}, rshape: []int{50}, origin: []int{30}, w: box{lo: []int{40}, hi: []int{70}}},
		{shape: []int{6, 9}, lo: []int{6, 9}, rshape: []int{20, 30}, origin: []int{0, 0}, w: box{lo: []int{6, 9}, hi: []int{12, 18}}},
		{shape: []int{6, 9}, lo: []int{6, 9}, rshape: []int{4, 30}, origin: []int{7, 0}, w: box{lo: []int{7, 9}, hi: []int{11, 18}}},
		{shape: []int{6, 9}, lo: []int{6, 9}, rshape: []int{8, 5}, origin: []int{5, 12}, w: box{lo: []int{6, 12}, hi: []int{12, 17}}},
		{shape: []int{4, 5, 33}, lo: []int{4, 0, 33}, rshape: []int{4, 5, 33}, origin: []int{4, 0, 33}, w: box{lo: []int{4, 0, 33}, hi: []int{8, 5, 66}}},
		{shape: []int{4, 5, 33}, lo: []int{4, 0, 33}, rshape: []int{9, 7, 40}, origin: []int{2, -1, 30}, w: box{lo: []int{4, 0, 33}, hi: []int{8, 5, 66}}},
		{shape: []int{4, 5, 33}, lo: []int{4, 0, 33}, rshape: []int{9, 5, 33}, origin: []int{2, 0, 33}, w: box{lo: []int{4, 0, 33}, hi: []int{8, 5, 66}}},
		{shape: []int{4, 5, 33}, lo: []int{4, 0, 33}, rshape: []int{2, 3, 50}, origin: []int{6, 1, 20}, w: box{lo: []int{6, 1, 33}, hi: []int{8, 4, 66}}},
		{shape: []int{8, 8, 8}, lo: []int{8, 8, 8}, rshape: []int{12, 12, 12}, origin: []int{6, 6, 6}, w: box{lo: []int{8, 8, 8}, hi: []int{16, 16, 16}}},
		{shape: []int{8, 8, 8}, lo: []int{8, 8, 8}, rshape: []int{2, 12, 12}, origin: []int{14, 6, 6}, w: box{lo: []int{14, 8, 8}, hi: []int{16, 16, 16}}},
		{shape: nil, lo: nil, rshape: nil, origin: nil, w: box{}},
	}
}

// bloscCases are blosc settings to write chunks with: each shuffle, the
// element's size as typesize and others (a shuffle the runs' elements do
// not align with), c-blosc's block sizes and odd ones.
func bloscCases(es int) []bloscCodec {
	var cs []bloscCodec
	for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
		for _, ts := range []int{es, 1, 3, 8} {
			for _, bs := range []int{0, 64, 100, 8 * es} {
				cs = append(cs, bloscCodec{cname: "lz4", clevel: 5, shuffle: sh, typesize: ts, blocksize: bs})
			}
		}
	}
	return cs
}

// TestRunsDecode: blosc decoding a chunk straight into a region's rows
// (bloscDecodeRuns), and a raw chunk's scatter, write what decoding the
// chunk whole and copying its box does, for elements of 1, 2, 4 and 8
// bytes, chunks whole and cut, every shuffle and block size; the region's
// bytes outside the box (guard bytes) are left as they were.
func TestRunsDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	const guard = 0xA5
	for _, es := range []int{1, 2, 4, 8} {
		for ci, rc := range runsCases() {
			n := prod(rc.shape) * es
			chunk := make([]byte, n)
			for i := range chunk {
				chunk[i] = byte(rng.IntN(4)) // compressible
			}
			if n > 8 {
				for i := range n / 3 {
					chunk[i] = byte(rng.Uint32())
				}
			}
			src := region{b: chunk, strides: cStrides(rc.shape), origin: rc.lo}
			fresh := func() region {
				b := bytes.Repeat([]byte{guard}, prod(rc.rshape)*es)
				return region{b: b, strides: cStrides(rc.rshape), origin: rc.origin}
			}
			want := fresh()
			copyBox(want, src, rc.w, es)
			for _, bc := range append(bloscCases(es), bloscCodec{cname: "raw"}) {
				name := fmt.Sprintf("%d-byte elements, case %d, %+v", es, ci, bc)
				got := fresh()
				rs, ok := newRuns(got, rc.lo, rc.shape, rc.w, es)
				if !ok {
					t.Fatalf("%s: no runs", name)
				}
				if bc.cname == "raw" {
					rs.scatter(chunk, 0)
				} else {
					enc, err := bc.encode(chunk)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if err := bloscDecodeRuns(enc, rs); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					// Twice through the same runs: the cursor starts again.
					if err := bloscDecodeRuns(enc, rs); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				if !bytes.Equal(got.b, want.b) {
					t.Fatalf("%s: the region differs from the chunk decoded and its box copied", name)
				}
			}
		}
	}
}

// TestRunsEncode: blosc encoding a chunk from a region's rows
// (encodeRuns) gives the bytes encoding a copy of the chunk gives, for
// the same cases, and reads nothing of the region outside the chunk (a
// region whose other bytes change encodes the same).
func TestRunsEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 2))
	for _, es := range []int{1, 2, 4, 8} {
		for ci, rc := range runsCases() {
			whole := box{lo: slices.Clone(rc.lo), hi: addTo(rc.lo, rc.shape)}
			if !slices.Equal(rc.w.lo, whole.lo) || !slices.Equal(rc.w.hi, whole.hi) {
				continue // encodeRuns takes whole chunks
			}
			region1 := region{b: make([]byte, prod(rc.rshape)*es), strides: cStrides(rc.rshape), origin: rc.origin}
			for i := range region1.b {
				region1.b[i] = byte(rng.IntN(3))
			}
			chunk := make([]byte, prod(rc.shape)*es)
			copyBox(region{b: chunk, strides: cStrides(rc.shape), origin: rc.lo}, region1, whole, es)
			region2 := region{b: slices.Clone(region1.b), strides: region1.strides, origin: region1.origin}
			for i := range region2.b {
				region2.b[i] ^= 0xFF
			}
			copyBox(region2, region{b: chunk, strides: cStrides(rc.shape), origin: rc.lo}, whole, es)
			for _, bc := range bloscCases(es) {
				name := fmt.Sprintf("%d-byte elements, case %d, %+v", es, ci, bc)
				want, err := bc.encode(chunk)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for k, rg := range []region{region1, region2} {
					rs, ok := newRuns(rg, rc.lo, rc.shape, rc.w, es)
					if !ok {
						t.Fatalf("%s: no runs", name)
					}
					got, err := bc.encodeRuns(rs, nil)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s, region %d: encoded from the rows, %d bytes differ from the copy's %d", name, k+1, len(got), len(want))
					}
				}
			}
		}
	}
}

// TestRunsIncompressible: a chunk blosc stores whole (memcpyed) encodes
// and decodes through runs as through a copy.
func TestRunsIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 3))
	rc := runsCases()[6]
	es := 4
	rg := region{b: make([]byte, prod(rc.rshape)*es), strides: cStrides(rc.rshape), origin: rc.origin}
	for i := range rg.b {
		rg.b[i] = byte(rng.Uint32())
	}
	chunk := make([]byte, prod(rc.shape)*es)
	copyBox(region{b: chunk, strides: cStrides(rc.shape), origin: rc.lo}, rg, rc.w, es)
	bc := bloscCodec{cname: "lz4", clevel: 5, shuffle: NoShuffle, typesize: es}
	want, _ := bc.encode(chunk)
	if want[2]&bloscMemcpyed == 0 {
		t.Fatalf("random bytes were compressed: the case does not test a chunk stored whole")
	}
	rs, _ := newRuns(rg, rc.lo, rc.shape, rc.w, es)
	got, err := bc.encodeRuns(rs, nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("encodeRuns: %v, same bytes %v", err, bytes.Equal(got, want))
	}
	out := region{b: make([]byte, len(rg.b)), strides: rg.strides, origin: rg.origin}
	rs, _ = newRuns(out, rc.lo, rc.shape, rc.w, es)
	if err := bloscDecodeRuns(got, rs); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(chunk))
	copyBox(region{b: back, strides: cStrides(rc.shape), origin: rc.lo}, out, rc.w, es)
	if !bytes.Equal(back, chunk) {
		t.Fatal("decoded through runs, the chunk differs")
	}
}

// splitBlosc writes chunk as c-blosc does by default (and zarr-python's
// arrays hold): byte-shuffled blocks of bs bytes, each cut into its ts
// rows, the splits, compressed with LZ4 apart; a split that does not
// compress (rawEvery: every that many, whatever it holds) stored raw.
// ndconv's encoder writes blocks whole, so only such buffers show that
// the splits stored raw are unshuffled from where they are.
func splitBlosc(chunk []byte, ts, bs, rawEvery int) []byte {
	n := len(chunk)
	nblocks := (n + bs - 1) / bs
	out := make([]byte, bloscHeader+4*nblocks)
	out[0], out[1], out[2], out[3] = 2, 1, bloscLZ4<<5|bloscShuffle, byte(ts)
	binary.LittleEndian.PutUint32(out[4:], uint32(n))
	binary.LittleEndian.PutUint32(out[8:], uint32(bs))
	k := 0
	for i := range nblocks {
		block := chunk[i*bs : min(n, (i+1)*bs)]
		sh := make([]byte, len(block))
		shuffleBytes(sh, block, ts)
		nsplits := ts
		if len(block) < bs {
			nsplits = 1 // the last, shorter block is one split
		}
		binary.LittleEndian.PutUint32(out[bloscHeader+4*i:], uint32(len(out)))
		ne := len(sh) / nsplits
		for j := range nsplits {
			part := sh[j*ne : (j+1)*ne]
			z := make([]byte, lz4.CompressBlockBound(len(part)))
			m, err := lz4.CompressBlock(part, z, nil)
			if k++; err != nil || m == 0 || m >= len(part) || rawEvery > 0 && k%rawEvery == 0 {
				z, m = part, len(part)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(m))
			out = append(out, z[:m]...)
		}
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)))
	return out
}

// TestSplitsRaw: blocks split by byte, some splits stored raw, decode
// to the chunk whole (bloscDecode) and into a region's rows
// (bloscDecodeRuns), for elements of 2, 4 and 8 bytes.
func TestSplitsRaw(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 4))
	const guard = 0xA5
	for _, es := range []int{2, 4, 8} {
		for ci, rc := range runsCases() {
			n := prod(rc.shape) * es
			chunk := make([]byte, n)
			for i := range chunk {
				chunk[i] = byte(rng.IntN(3))
				if i%es == 0 {
					chunk[i] = byte(rng.Uint32()) // a low byte that does not compress
				}
			}
			for _, bs := range []int{16 * es, 64 * es, max(es, n)} {
				for _, rawEvery := range []int{0, 2, 3} {
					name := fmt.Sprintf("%d-byte elements, case %d, blocks of %d, raw every %d", es, ci, bs, rawEvery)
					enc := splitBlosc(chunk, es, bs, rawEvery)
					got, err := bloscDecode(enc, nil, n)
					if err != nil || !bytes.Equal(got, chunk) {
						t.Fatalf("%s: bloscDecode: %v, same bytes %v", name, err, bytes.Equal(got, chunk))
					}
					want := region{b: bytes.Repeat([]byte{guard}, prod(rc.rshape)*es), strides: cStrides(rc.rshape), origin: rc.origin}
					out := region{b: slices.Clone(want.b), strides: want.strides, origin: want.origin}
					copyBox(want, region{b: chunk, strides: cStrides(rc.shape), origin: rc.lo}, rc.w, es)
					rs, _ := newRuns(out, rc.lo, rc.shape, rc.w, es)
					if err := bloscDecodeRuns(enc, rs); err != nil || !bytes.Equal(out.b, want.b) {
						t.Fatalf("%s: bloscDecodeRuns: %v, same bytes %v", name, err, bytes.Equal(out.b, want.b))
					}
				}
			}
		}
	}
}
