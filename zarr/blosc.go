package zarr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zlib"
	"github.com/pierrec/lz4/v4"
)

// Blosc's 16-byte header (c-blosc 1.x, the format numcodecs writes):
//
//	0  version        2 (3 and 4 from later writers: bit-shuffle leftovers)
//	1  versionlz      the inner compressor's format version
//	2  flags          bit 0 byte shuffle, bit 1 stored uncompressed,
//	                  bit 2 bit shuffle, bit 4 blocks not split by byte,
//	                  bits 5-7 the compressor (0 blosclz, 1 lz4/lz4hc,
//	                  2 snappy, 3 zlib, 4 zstd)
//	3  typesize       the element size shuffling uses
//	4  nbytes  u32    the decompressed size
//	8  blocksize u32  the bytes of each block (the last may be shorter)
//	12 cbytes  u32    the compressed size, header included
//
// Unless stored uncompressed, nblocks u32 offsets of the blocks follow;
// each block is its splits (typesize of them, or one when bit 4 is set or
// for the last, shorter block), each an i32 size then that many bytes,
// stored raw when the size equals the split's decompressed size.
const (
	bloscHeader     = 16
	bloscShuffle    = 0x1
	bloscMemcpyed   = 0x2
	bloscBitShuffle = 0x4
	bloscNoSplit    = 0x10
	blosclzMaxDist  = 8191
)

// Blosc compressor codes (the flags' top three bits).
const (
	bloscBlosclz = 0
	bloscLZ4     = 1
	bloscSnappy  = 2
	bloscZlib    = 3
	bloscZstd    = 4
)

// Shuffle is blosc's reordering of bytes before compression.
type Shuffle int

const (
	NoShuffle   Shuffle = 0 // bytes as they are
	ByteShuffle Shuffle = 1 // the k-th byte of every element together
	BitShuffle  Shuffle = 2 // the k-th bit of every element together
)

var shuffleNames = map[Shuffle]string{NoShuffle: "noshuffle", ByteShuffle: "shuffle", BitShuffle: "bitshuffle"}

// bloscCodec is blosc 1.x in numcodecs' and Zarr v3's configuration.
type bloscCodec struct {
	cname     string // lz4, lz4hc, zstd, zlib, blosclz (decode only)
	clevel    int
	shuffle   Shuffle
	typesize  int
	blocksize int // 0: chosen here
}

func (c bloscCodec) v3() codecJSON {
	return codecJSON{Name: "blosc", Configuration: map[string]any{"cname": c.cname, "clevel": c.clevel,
		"shuffle": shuffleNames[c.shuffle], "typesize": c.typesize, "blocksize": c.blocksize}}
}

func (c bloscCodec) v2() map[string]any {
	return map[string]any{"id": "blosc", "cname": c.cname, "clevel": c.clevel, "shuffle": int(c.shuffle), "blocksize": c.blocksize}
}

func (c bloscCodec) decode(b []byte, limit int) ([]byte, error) { return bloscDecode(b, nil, limit) }

// decodeInto implements intoDecoder.
func (c bloscCodec) decodeInto(b, dst []byte, limit int) ([]byte, error) {
	return bloscDecode(b, dst, limit)
}

// bloscScratch holds the blocks' shuffled bytes between the compressor
// and the shuffle, a block at a time (c-blosc's default block for a
// float32 chunk of zarr-python's: 512 KiB).
var bloscScratch = sync.Pool{New: func() any { return new([]byte) }}

// scratch is a pooled buffer of n bytes, and what gives it back.
func scratch(n int) ([]byte, func()) { return pooledScratch(&bloscScratch, n) }

// bloscRaw holds a block gathered from a region's rows before its
// shuffle, where the shuffle cannot read the rows themselves.
var bloscRaw = sync.Pool{New: func() any { return new([]byte) }}

// rawScratch is scratch from bloscRaw: a block gathered before its shuffle.
func rawScratch(n int) ([]byte, func()) { return pooledScratch(&bloscRaw, n) }

func pooledScratch(pool *sync.Pool, n int) ([]byte, func()) {
	p := pool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	return (*p)[:n], func() { pool.Put(p) }
}

// bloscDecode decompresses one blosc buffer of at most limit bytes, into
// dst's memory where it fits there.
func bloscDecode(b, dst []byte, limit int) (out []byte, err error) {
	h, err := parseBlosc(b, limit)
	if err != nil {
		return nil, err
	}
	if int64(cap(dst)) >= h.nbytes {
		out = dst[:h.nbytes]
	} else {
		out = make([]byte, h.nbytes)
	}
	return out, h.decode(b, out, nil)
}

// bloscDecodeRuns decompresses one blosc buffer of a chunk straight into
// the region rs maps the chunk's bytes to: each block unshuffled into the
// rows it holds (the chunk's box of the block's input), where a chunk
// buffer and a copy of the box from it took as long as the decode. The
// buffer must hold the whole chunk. A bit shuffle, or a byte shuffle
// whose elements a run would cut, is decoded into a buffer and copied.
func bloscDecodeRuns(b []byte, rs *runs) error {
	h, err := parseBlosc(b, rs.size)
	if err != nil {
		return err
	}
	if h.nbytes != int64(rs.size) {
		return fmt.Errorf("blosc: %d bytes; the chunk holds %d", h.nbytes, rs.size)
	}
	if h.flags&bloscMemcpyed == 0 && (h.flags&bloscBitShuffle != 0 ||
		h.flags&bloscShuffle != 0 && !rs.shuffleAligned(h.typesize, int(h.blocksize))) {
		buf := getBuf(rs.size)
		defer putBuf(buf)
		if err := h.decode(b, buf, nil); err != nil {
			return err
		}
		rs.scatter(buf, 0)
		return nil
	}
	return h.decode(b, nil, rs)
}

// bloscHead is a blosc buffer's header.
type bloscHead struct {
	version, flags            byte
	typesize                  int
	nbytes, blocksize, cbytes int64
}

// parseBlosc reads and checks the header of b, a blosc buffer of at most
// limit bytes decoded.
func parseBlosc(b []byte, limit int) (h bloscHead, err error) {
	if len(b) < bloscHeader {
		return h, fmt.Errorf("blosc: %d bytes, less than its 16-byte header", len(b))
	}
	h = bloscHead{version: b[0], flags: b[2], typesize: int(b[3]),
		nbytes:    int64(binary.LittleEndian.Uint32(b[4:])),
		blocksize: int64(binary.LittleEndian.Uint32(b[8:])),
		cbytes:    int64(binary.LittleEndian.Uint32(b[12:]))}
	switch {
	case h.version == 0 || h.version > 4:
		return h, fmt.Errorf("blosc: format version %d (1 to 4 are read)", h.version)
	case h.nbytes > int64(limit):
		return h, fmt.Errorf("blosc: header claims %d bytes, more than the %d expected", h.nbytes, limit)
	case h.cbytes < bloscHeader || h.cbytes > int64(len(b)):
		return h, fmt.Errorf("blosc: header claims %d compressed bytes; the buffer has %d", h.cbytes, len(b))
	case h.typesize == 0:
		return h, fmt.Errorf("blosc: typesize 0")
	}
	return h, nil
}

// decode decompresses the blosc buffer b of header h into out (nbytes
// long), or, where out is nil, into the region rs maps the bytes to
// (a byte shuffle then whole elements in every run: bloscDecodeRuns).
func (h bloscHead) decode(b, out []byte, rs *runs) error {
	flags, typesize, nbytes, blocksize, cbytes := h.flags, h.typesize, h.nbytes, h.blocksize, h.cbytes
	b = b[:cbytes]
	if nbytes == 0 {
		return nil
	}
	if flags&bloscMemcpyed != 0 {
		if cbytes != bloscHeader+nbytes {
			return fmt.Errorf("blosc: stored uncompressed, %d bytes after the header; the header claims %d", cbytes-bloscHeader, nbytes)
		}
		if rs != nil {
			rs.scatter(b[bloscHeader:], 0)
		} else {
			copy(out, b[bloscHeader:])
		}
		return nil
	}
	if blocksize <= 0 {
		return fmt.Errorf("blosc: block size %d", blocksize)
	}
	nblocks := (nbytes + blocksize - 1) / blocksize
	if bloscHeader+4*nblocks > cbytes {
		return fmt.Errorf("blosc: %d blocks' offsets do not fit in %d bytes", nblocks, cbytes)
	}
	comp := int(flags >> 5)
	tmp, done := scratch(int(min(blocksize, nbytes)))
	defer done()
	for i := range nblocks {
		bsize := blocksize
		last := i == nblocks-1 && nbytes%blocksize != 0
		if last {
			bsize = nbytes % blocksize
		}
		start := int64(binary.LittleEndian.Uint32(b[bloscHeader+4*i:]))
		if start < bloscHeader+4*nblocks || start >= cbytes {
			return fmt.Errorf("blosc: block %d starts at %d, outside %d to %d", i, start, bloscHeader+4*nblocks, cbytes)
		}
		nsplits := int64(1)
		if flags&bloscNoSplit == 0 && !last {
			nsplits = int64(typesize)
		}
		neblock := bsize / nsplits
		if neblock*nsplits != bsize {
			return fmt.Errorf("blosc: block %d of %d bytes does not split into %d", i, bsize, nsplits)
		}
		off := int(i * blocksize)
		dst := tmp[:bsize]
		shuffled := flags&(bloscShuffle|bloscBitShuffle) != 0
		if !shuffled {
			// Straight into the output where one run holds the block.
			if rs == nil {
				dst = out[off : off+int(bsize)]
			} else if w := rs.whole(off, off+int(bsize)); w != nil {
				dst = w
			}
		}
		// A byte shuffle's splits are its rows when there is one per byte
		// of an element: those stored raw (the random low bytes of
		// floats) are unshuffled from where they are, not copied first.
		var rowBuf [8][]byte
		var rows [][]byte
		if flags&bloscShuffle != 0 {
			rows = shuffledRows(dst, int(bsize)/typesize, typesize, &rowBuf)
		}
		split := rows != nil && nsplits == int64(typesize) && nsplits > 1
		pos := start
		for j := range nsplits {
			if pos+4 > cbytes {
				return fmt.Errorf("blosc: block %d split %d: size at %d, past the end %d", i, j, pos, cbytes)
			}
			csize := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
			if csize < 0 || csize > cbytes-pos {
				return fmt.Errorf("blosc: block %d split %d: %d bytes at %d, past the end %d", i, j, csize, pos, cbytes)
			}
			src, part := b[pos:pos+csize], dst[j*neblock:(j+1)*neblock]
			pos += csize
			if csize == neblock {
				if split {
					rows[j] = src
				} else {
					copy(part, src)
				}
				continue
			}
			if err := bloscInflate(comp, src, part); err != nil {
				return fmt.Errorf("blosc: block %d split %d: %w", i, j, err)
			}
		}
		switch {
		case rs == nil && flags&bloscShuffle != 0:
			o := out[off : off+int(bsize)]
			n := int(bsize) / typesize * typesize
			unshuffleAt(o[:n], rows, 0, typesize)
			copy(o[n:], dst[n:]) // bytes past the last whole element
		case rs == nil && flags&bloscBitShuffle != 0:
			bitUnshuffle(out[off:off+int(bsize)], dst, typesize, h.version)
		case rs == nil:
		case flags&bloscShuffle != 0:
			rs.unshuffle(rows, off, typesize)
		case &dst[0] == &tmp[0]:
			rs.scatter(dst, off)
		}
	}
	return nil
}

// bloscInflate decompresses src with blosc's compressor comp into all of
// dst, which it must fill exactly.
func bloscInflate(comp int, src, dst []byte) (err error) {
	var n int
	switch comp {
	case bloscBlosclz:
		n, err = blosclzDecode(src, dst)
	case bloscLZ4:
		n, err = lz4.UncompressBlock(src, dst)
	case bloscZlib:
		var r interface{ Read([]byte) (int, error) }
		if r, err = zlib.NewReader(bytes.NewReader(src)); err == nil {
			var out []byte
			out, err = readBounded(r, len(dst), len(dst))
			n = copy(dst, out)
		}
	case bloscZstd:
		var out []byte
		out, err = zstdCodec{}.decode(src, len(dst))
		n = copy(dst, out)
	case bloscSnappy:
		return fmt.Errorf("snappy is not supported (blosclz, lz4, lz4hc, zlib and zstd are)")
	default:
		return fmt.Errorf("unknown compressor code %d", comp)
	}
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("decompressed to %d bytes, not %d", n, len(dst))
	}
	return nil
}

// blosclzDecode decompresses blosc's own LZ77 format (FastLZ's level 2
// with a longer distance) into dst, returning the bytes written. Like
// c-blosc's decoder, a match with no byte after it ends the data.
func blosclzDecode(src, dst []byte) (int, error) {
	errCorrupt := fmt.Errorf("blosclz: corrupt data")
	if len(src) == 0 {
		return 0, errCorrupt
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			n := ctrl>>5 - 1
			ofs := (ctrl & 31) << 8
			if n == 6 {
				for {
					if ip+1 >= len(src) {
						return 0, errCorrupt
					}
					code := int(src[ip])
					ip++
					n += code
					if code != 255 {
						break
					}
				}
			} else if ip+1 >= len(src) {
				return 0, errCorrupt
			}
			code := int(src[ip])
			ip++
			n += 3
			dist := ofs + code + 1
			if code == 255 && ofs == 31<<8 {
				if ip+1 >= len(src) {
					return 0, errCorrupt
				}
				dist = int(src[ip])<<8 + int(src[ip+1]) + blosclzMaxDist + 1
				ip += 2
			}
			if n > len(dst)-op || dist > op {
				return 0, errCorrupt
			}
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
			for k := range n {
				dst[op+k] = dst[op-dist+k]
			}
			op += n
		} else {
			n := ctrl + 1
			if n > len(dst)-op || n > len(src)-ip {
				return 0, errCorrupt
			}
			copy(dst[op:], src[ip:ip+n])
			op += n
			ip += n
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
		}
	}
	return op, nil
}

// bitElements is how many elements of a block bit-shuffling reorders: a
// multiple of 8. Format version 2 reordered a block only when all its
// elements were (else none); later versions reorder the largest multiple
// of 8 and leave the rest.
func bitElements(bsize, typesize int, version byte) int {
	n := bsize / typesize
	if version <= 2 && n%8 != 0 {
		return 0
	}
	return n - n%8
}

// bitUnshuffle undoes bit shuffling (the bitshuffle library's layout):
// for each byte j of an element and bit k of that byte, a row of n bits
// holds that bit of every element, element i at bit i%8 of byte i/8. So
// byte g of rows 8j … 8j+7 is an 8×8 matrix of bits whose transpose is
// byte j of elements 8g … 8g+7: one transpose of a 64-bit word for eight
// bytes, where a bit at a time ran at ~50 MB/s.
func bitUnshuffle(dst, src []byte, typesize int, version byte) {
	n := bitElements(len(src), typesize, version)
	rowBytes := n / 8
	for j := range typesize {
		rows := src[j*8*rowBytes : (j+1)*8*rowBytes]
		for g := range rowBytes {
			var x uint64
			for k := range 8 {
				x |= uint64(rows[k*rowBytes+g]) << (8 * k)
			}
			x = transpose8x8(x)
			for b := range 8 {
				dst[(8*g+b)*typesize+j] = byte(x >> (8 * b))
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// bitShuffle is bitUnshuffle's inverse (the transpose is its own).
func bitShuffle(dst, src []byte, typesize int, version byte) {
	n := bitElements(len(src), typesize, version)
	rowBytes := n / 8
	for j := range typesize {
		rows := dst[j*8*rowBytes : (j+1)*8*rowBytes]
		for g := range rowBytes {
			var x uint64
			for b := range 8 {
				x |= uint64(src[(8*g+b)*typesize+j]) << (8 * b)
			}
			x = transpose8x8(x)
			for k := range 8 {
				rows[k*rowBytes+g] = byte(x >> (8 * k))
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// transpose8x8 transposes the 8×8 matrix of bits whose row r is byte r of
// x and column c bit c of each byte (Hacker's Delight, 7-3: three rounds
// of swapping 1×1, 2×2 and 4×4 blocks across the diagonal).
func transpose8x8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00AA00AA00AA00AA
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000CCCC0000CCCC
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000F0F0F0F0
	return x ^ t ^ t<<28
}

// bloscBlockSize is the block size an encode uses when none is given:
// about 256 KiB, a whole number of elements.
const bloscBlockSize = 1 << 18

func (c bloscCodec) encode(b []byte) ([]byte, error) { return c.encodeInto(b, nil) }

// encodeInto implements intoEncoder.
func (c bloscCodec) encodeInto(b, dst []byte) ([]byte, error) {
	return c.encodeFrom(len(b), b, nil, dst)
}

// encodeRuns is encodeInto for the chunk whose bytes rs maps to the rows
// of a region (all of them: the box is the whole chunk), each block
// shuffled from those rows into the compressor's input instead of from a
// copy of the chunk: the same bytes.
func (c bloscCodec) encodeRuns(rs *runs, dst []byte) ([]byte, error) {
	return c.encodeFrom(rs.size, nil, rs, dst)
}

// encodeFrom encodes the nbytes bytes of a chunk held in b, or, where b
// is nil, in the region rs maps them to.
func (c bloscCodec) encodeFrom(nbytes int, b []byte, rs *runs, dst []byte) ([]byte, error) {
	var comp int
	switch c.cname {
	case "lz4", "lz4hc":
		comp = bloscLZ4
	case "zstd":
		comp = bloscZstd
	case "zlib":
		comp = bloscZlib
	default:
		return nil, &UnsupportedError{Key: "blosc", What: "compressor to write", Value: c.cname, Supported: "lz4, lz4hc, zstd, zlib"}
	}
	ts := max(1, min(c.typesize, 255))
	if int64(nbytes) > MaxChunkBytes {
		return nil, fmt.Errorf("blosc: %d bytes, more than %d", nbytes, MaxChunkBytes)
	}
	const version = 2
	bs := c.blocksize
	if bs <= 0 {
		bs = bloscBlockSize
	}
	bs = min(bs, nbytes)
	if bs >= ts {
		bs -= bs % ts
	}
	flags := byte(comp<<5) | bloscNoSplit
	switch c.shuffle {
	case ByteShuffle:
		flags |= bloscShuffle
	case BitShuffle:
		flags |= bloscBitShuffle
	}
	header := func(flags byte, cbytes int) []byte {
		h := dst[:0]
		if cap(h) < cbytes {
			h = make([]byte, 0, cbytes)
		}
		h = h[:bloscHeader]
		h[0], h[1], h[2], h[3] = version, 1, flags, byte(ts)
		binary.LittleEndian.PutUint32(h[4:], uint32(nbytes))
		binary.LittleEndian.PutUint32(h[8:], uint32(bs))
		binary.LittleEndian.PutUint32(h[12:], uint32(cbytes))
		return h
	}
	memcpyed := func() []byte {
		h := header(flags&^(bloscShuffle|bloscBitShuffle)|bloscMemcpyed, bloscHeader+nbytes)
		if rs == nil {
			return append(h, b...)
		}
		h = h[:bloscHeader+nbytes]
		rs.gather(h[bloscHeader:], 0)
		return h
	}
	if nbytes == 0 || bs == 0 {
		return memcpyed(), nil
	}
	nblocks := (nbytes + bs - 1) / bs
	// Room for every block stored raw (past that, the chunk is stored
	// whole) and one block's compression bound: the compressor writes in
	// place and the buffer never grows (it grew by copies, a tenth of
	// writing a float32 volume).
	out := header(flags, bloscHeader+8*nblocks+nbytes+bloscBound(c.cname, bs))
	out = append(out, make([]byte, 4*nblocks)...)
	tmp, done := scratch(bs)
	defer done()
	// From a region, a block is shuffled from its rows (whole elements in
	// each), else gathered into raw first.
	var raw []byte
	direct := rs != nil && (c.shuffle == NoShuffle || c.shuffle == ByteShuffle && rs.shuffleAligned(ts, bs))
	if rs != nil && !direct {
		var done2 func()
		raw, done2 = rawScratch(bs)
		defer done2()
	}
	for i := range nblocks {
		from, to := i*bs, min(nbytes, (i+1)*bs)
		var block []byte
		switch {
		case rs == nil:
			block = b[from:to]
		case direct && c.shuffle == ByteShuffle:
			rs.shuffle(tmp[:to-from], from, ts)
			block = tmp[:to-from]
		case direct:
			if block = rs.whole(from, to); block == nil {
				block = tmp[:to-from]
				rs.gather(block, from)
			}
		default:
			block = raw[:to-from]
			rs.gather(block, from)
		}
		switch c.shuffle {
		case ByteShuffle:
			if !direct {
				shuffleBytes(tmp[:len(block)], block, ts)
				block = tmp[:len(block)]
			}
		case BitShuffle:
			bitShuffle(tmp[:len(block)], block, ts, version)
			block = tmp[:len(block)]
		}
		binary.LittleEndian.PutUint32(out[bloscHeader+4*i:], uint32(len(out)))
		at := len(out) + 4
		room := out[at:cap(out)]
		z, err := bloscDeflate(c.cname, c.clevel, block, room)
		if err != nil {
			return nil, err
		}
		if z == nil || len(z) >= len(block) {
			z = block // stored raw: its size equals the block's
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(z)))
		if len(z) > 0 && len(room) > 0 && &z[0] == &room[0] {
			out = out[:at+len(z)] // compressed in place
		} else {
			out = append(out, z...)
		}
		if len(out) >= bloscHeader+nbytes {
			return memcpyed(), nil
		}
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)))
	return out, nil
}

// bloscDeflate compresses one block; nil means it does not compress.
func bloscDeflate(cname string, clevel int, block, room []byte) ([]byte, error) {
	switch cname {
	case "lz4":
		z := lz4Room(block, room)
		n, err := lz4.CompressBlock(block, z, nil)
		if err != nil || n == 0 {
			return nil, nil
		}
		return z[:n], nil
	case "lz4hc":
		z := lz4Room(block, room)
		n, err := lz4.CompressBlockHC(block, z, lz4.CompressionLevel(1<<(8+max(1, min(clevel, 9)))), nil, nil)
		if err != nil || n == 0 {
			return nil, nil
		}
		return z[:n], nil
	case "zstd":
		return zstdCodec{level: max(1, clevel)}.encode(block)
	case "zlib":
		return zlibCodec{level: max(1, min(clevel, 9))}.encode(block)
	}
	return nil, fmt.Errorf("blosc: cannot write %s", cname)
}

// lz4Room is room when it holds LZ4's bound for block, else a new buffer.
func lz4Room(block, room []byte) []byte {
	bound := lz4.CompressBlockBound(len(block))
	if len(room) >= bound {
		return room[:bound]
	}
	return make([]byte, bound)
}

// bloscBound is the room bloscCodec.encode keeps past a raw block for
// cname's compressor to write one block of bs bytes in place.
func bloscBound(cname string, bs int) int {
	if cname == "lz4" || cname == "lz4hc" {
		return lz4.CompressBlockBound(bs) - bs
	}
	return 0
}
