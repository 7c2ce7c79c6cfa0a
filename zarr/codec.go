package zarr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// MaxChunkBytes bounds the decoded size of one chunk (or shard) this
// package reads or writes, so that metadata that names a huge chunk fails
// before anything that large is allocated.
const MaxChunkBytes = 1 << 30

// maxValueBytes bounds one stored value (a chunk or a shard as stored).
const maxValueBytes = 1 << 31

// A bytesCodec is a bytes-to-bytes step of a codec chain: a compressor or
// a checksum.
type bytesCodec interface {
	// encode returns the encoded form of b (b is not modified).
	encode(b []byte) ([]byte, error)
	// decode returns the decoded form of b, of at most limit bytes; a
	// longer result is an error, found before it is allocated.
	decode(b []byte, limit int) ([]byte, error)
	// v3 is the codec's Zarr v3 metadata.
	v3() codecJSON
	// v2 is the codec's Zarr v2 compressor metadata, or nil where v2 has
	// none.
	v2() map[string]any
}

// An intoDecoder is a bytesCodec that can decode into memory given it
// (the chunk's place in the array read, or a buffer from the pool),
// sparing a new buffer and a copy.
type intoDecoder interface {
	// decodeInto is decode, its result in dst's memory where it fits in
	// cap(dst) (dst's contents are then overwritten), else elsewhere.
	decodeInto(b, dst []byte, limit int) ([]byte, error)
}

// An intoEncoder is a bytesCodec that can encode into a buffer given it
// (from the pool).
type intoEncoder interface {
	// encodeInto is encode, its result in dst's memory where it fits in
	// cap(dst), else elsewhere.
	encodeInto(b, dst []byte) ([]byte, error)
}

type codecJSON struct {
	Name          string         `json:"name"`
	Configuration map[string]any `json:"configuration,omitempty"`
}

// errTooLarge is the cause of a decode whose result would pass its limit.
var errTooLarge = errors.New("decodes to more bytes than the chunk holds")

// readBounded reads r to its end, expecting about hint bytes and refusing
// more than limit.
func readBounded(r io.Reader, hint, limit int) ([]byte, error) {
	if hint > limit {
		hint = limit
	}
	buf := bytes.NewBuffer(make([]byte, 0, hint+1))
	n, err := io.Copy(buf, io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// gzipCodec is gzip (RFC 1952), "gzip" in both versions.
type gzipCodec struct{ level int }

func (c gzipCodec) encode(b []byte) ([]byte, error) {
	return compressWith(b, func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, c.level) })
}

// compressWith compresses b whole through the writer newWriter makes.
func compressWith(b []byte, newWriter func(io.Writer) (io.WriteCloser, error)) ([]byte, error) {
	var buf bytes.Buffer
	w, err := newWriter(&buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	err = w.Close()
	return buf.Bytes(), err
}

func (gzipCodec) decode(b []byte, limit int) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	// A chunk is one gzip member; more would be a concatenation that
	// numcodecs does not write.
	r.Multistream(false)
	return readBounded(r, limit, limit)
}

func (c gzipCodec) v3() codecJSON {
	return codecJSON{Name: "gzip", Configuration: map[string]any{"level": c.level}}
}
func (c gzipCodec) v2() map[string]any { return map[string]any{"id": "gzip", "level": c.level} }

// zlibCodec is zlib (RFC 1950): numcodecs' "zlib", also named so in v3.
type zlibCodec struct{ level int }

func (c zlibCodec) encode(b []byte) ([]byte, error) {
	return compressWith(b, func(w io.Writer) (io.WriteCloser, error) { return zlib.NewWriterLevel(w, c.level) })
}

func (zlibCodec) decode(b []byte, limit int) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return readBounded(r, limit, limit)
}

func (c zlibCodec) v3() codecJSON {
	return codecJSON{Name: "zlib", Configuration: map[string]any{"level": c.level}}
}
func (c zlibCodec) v2() map[string]any { return map[string]any{"id": "zlib", "level": c.level} }

// zstdCodec is Zstandard (RFC 8878).
type zstdCodec struct {
	level    int
	checksum bool
}

// zstdDecoders holds a decoder for each power of two of output bound: a
// decoder refuses, before allocating, a frame that claims more content or
// a larger window than its bound, so that a corrupt frame of a few bytes
// cannot make it allocate more than twice the chunk it should hold (or
// 1 MiB).
var zstdDecoders sync.Map // bits.Len(limit) → *zstd.Decoder

func zstdDecoder(limit int) (*zstd.Decoder, error) {
	// At least 1 MiB: a frame's window is at least 1 KiB whatever it
	// holds, and the library counts its own buffers against the bound.
	key := max(bits.Len(uint(limit)), 20)
	if d, ok := zstdDecoders.Load(key); ok {
		return d.(*zstd.Decoder), nil
	}
	bound := uint64(1) << key
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(bound), zstd.WithDecoderMaxMemory(bound))
	if err != nil {
		return nil, err
	}
	d2, loaded := zstdDecoders.LoadOrStore(key, d)
	if loaded {
		d.Close()
	}
	return d2.(*zstd.Decoder), nil
}

var zstdEncoders sync.Map // level, checksum → *zstd.Encoder (EncodeAll is safe for concurrent use)

func (c zstdCodec) encoder() (*zstd.Encoder, error) {
	key := [2]int{c.level, 0}
	if c.checksum {
		key[1] = 1
	}
	if e, ok := zstdEncoders.Load(key); ok {
		return e.(*zstd.Encoder), nil
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(c.level)),
		zstd.WithEncoderCRC(c.checksum), zstd.WithZeroFrames(true),
		// One encoder per core: EncodeAll takes one from a pool of this
		// many, so with one, shards encoding at once waited on each other.
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		// A single-segment frame always states its content size, which
		// numcodecs' decoder requires (the library omits it from small
		// frames otherwise).
		zstd.WithSingleSegment(true))
	if err != nil {
		return nil, err
	}
	e2, _ := zstdEncoders.LoadOrStore(key, e)
	return e2.(*zstd.Encoder), nil
}

func (c zstdCodec) encode(b []byte) ([]byte, error) {
	e, err := c.encoder()
	if err != nil {
		return nil, err
	}
	// Room for a chunk that does not compress (zstd's bound: raw blocks,
	// 3 bytes of header per 128 KiB, and the frame's header), so that
	// EncodeAll never grows it by a copy.
	return e.EncodeAll(b, make([]byte, 0, encodeBound(len(b)))), nil
}

// encodeBound is the room zstd may need for n bytes that do not compress
// (its bound: raw blocks, 3 bytes of header per 128 KiB, and the frame's
// header).
func encodeBound(n int) int { return n + n>>10 + 64 }

// encodeInto implements intoEncoder.
func (c zstdCodec) encodeInto(b, dst []byte) ([]byte, error) {
	e, err := c.encoder()
	if err != nil {
		return nil, err
	}
	return e.EncodeAll(b, dst[:0]), nil
}

func (c zstdCodec) decode(b []byte, limit int) ([]byte, error) {
	return c.decodeInto(b, nil, limit)
}

// decodeInto implements intoDecoder: the frame is decoded into dst's
// memory when it fits there (a longer one into a new buffer).
func (zstdCodec) decodeInto(b, dst []byte, limit int) ([]byte, error) {
	d, err := zstdDecoder(limit)
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(b, dst[:0])
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, errTooLarge
	}
	return out, nil
}

func (c zstdCodec) v3() codecJSON {
	return codecJSON{Name: "zstd", Configuration: map[string]any{"level": c.level, "checksum": c.checksum}}
}
func (c zstdCodec) v2() map[string]any { return map[string]any{"id": "zstd", "level": c.level} }

// crc32cCodec appends the CRC-32C (Castagnoli) of the bytes, little-endian.
type crc32cCodec struct{}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (crc32cCodec) encode(b []byte) ([]byte, error) {
	return binary.LittleEndian.AppendUint32(append(make([]byte, 0, len(b)+4), b...), crc32.Checksum(b, castagnoli)), nil
}

func (crc32cCodec) decode(b []byte, limit int) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("crc32c: %d bytes, less than the 4 of the checksum", len(b))
	}
	data, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(data, castagnoli); got != sum {
		return nil, fmt.Errorf("crc32c: checksum %08x, the bytes give %08x", sum, got)
	}
	if len(data) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

func (crc32cCodec) v3() codecJSON      { return codecJSON{Name: "crc32c"} }
func (crc32cCodec) v2() map[string]any { return nil }
