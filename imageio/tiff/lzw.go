package tiff

import (
	"encoding/binary"
	"errors"
)

// TIFF's LZW (TIFF 6.0, section 13): codes most significant bit first,
// starting 9 bits wide; 256 clears the table, 257 ends the data, 258 is the
// first string code. TIFF differs from the LZW of GIF and compress/lzw in
// when the code width grows: "early change", one code sooner, which is why
// compress/lzw's writer cannot be used. golang.org/x/image/tiff/lzw reads
// it; this file writes it, step for step as libtiff's LZWEncode and
// LZWPostEncode do.
const (
	lzwClear    = 256
	lzwEOI      = 257
	lzwFirst    = 258
	lzwMinWidth = 9
	lzwFull     = 4094 // libtiff's CODE_MAX-1: when the next code would be this, clear the table

	lzwHashBits = 13 // 8192 slots for at most 3836 strings
	lzwHashMask = 1<<lzwHashBits - 1
)

// lzwEncoder holds the string table and output of one encoding; its table
// is reused by the next.
type lzwEncoder struct {
	keys  [1 << lzwHashBits]uint32 // prefix<<8 | byte, plus 1; 0 marks an empty slot
	codes [1 << lzwHashBits]uint16

	out   []byte
	bits  uint64 // pending output bits, the newest in the low positions
	nbits uint   // how many of bits are pending (fewer than 8 between codes)
	width uint   // the current code width
}

// encode appends the LZW encoding of src to dst.
func (e *lzwEncoder) encode(dst, src []byte) []byte {
	e.out, e.bits, e.nbits, e.width = dst, 0, 0, lzwMinWidth
	e.clearTable()
	e.put(lzwClear)
	if len(src) > 0 {
		next := uint32(lzwFirst)
		prefix := uint32(src[0])
		for _, b := range src[1:] {
			key := prefix<<8 | uint32(b)
			slot := e.find(key)
			if e.keys[slot] != 0 {
				prefix = uint32(e.codes[slot])
				continue
			}
			e.put(prefix)
			e.keys[slot], e.codes[slot] = key+1, uint16(next)
			next = e.advance(next)
			prefix = uint32(b)
		}
		e.put(prefix)
		// The decoder adds a string for this last code too; the end code
		// must have the width that leaves it.
		e.advance(next)
	}
	e.put(lzwEOI)
	if e.nbits > 0 {
		e.out = append(e.out, byte(e.bits<<(8-e.nbits)))
	}
	return e.out
}

// advance accounts for the string code next just assigned and returns the
// code to assign after it, widening codes or clearing the table as the
// decoder will.
func (e *lzwEncoder) advance(next uint32) uint32 {
	next++
	if next == lzwFull {
		e.put(lzwClear)
		e.clearTable()
		e.width = lzwMinWidth
		return lzwFirst
	}
	if next > 1<<e.width-1 {
		e.width++
	}
	return next
}

// find returns the slot of key, or the empty slot where it belongs.
func (e *lzwEncoder) find(key uint32) int {
	slot := int((key*0x9e3779b1)>>(32-lzwHashBits)) & lzwHashMask
	for e.keys[slot] != 0 && e.keys[slot] != key+1 {
		slot = (slot + 1) & lzwHashMask
	}
	return slot
}

func (e *lzwEncoder) clearTable() { clear(e.keys[:]) }

func (e *lzwEncoder) put(code uint32) {
	e.bits = e.bits<<e.width | uint64(code)
	e.nbits += e.width
	for e.nbits >= 8 {
		e.nbits -= 8
		e.out = append(e.out, byte(e.bits>>e.nbits))
	}
}

// lzwDecoder decodes TIFF's LZW straight into a chunk's buffer. Every
// string in the table is a stretch of what has been decoded already (the
// previous code's string followed by the first byte of the next), so the
// table holds where that stretch starts and how long it is, and a code is
// expanded with one copy instead of a walk down a prefix chain. Its
// reading of codes and growth of their width is golang.org/x/image/tiff/
// lzw's, which libtiff's files are read with elsewhere.
type lzwDecoder struct {
	start  [1 << 12]int32
	length [1 << 12]int32
}

// errLZWData and errLZWCode are what decode reports for data that end too
// soon or hold a code that no string has yet.
var (
	errLZWData = errors.New("LZW data end before the chunk is full")
	errLZWCode = errors.New("invalid LZW code")
)

// decode fills dst from the LZW codes in src and returns how many bytes
// it decoded: len(dst) and nil, or fewer and an error. Codes after dst is
// full, and a missing end code, do not matter (as for the other codecs,
// only the decoded size is read).
func (d *lzwDecoder) decode(dst, src []byte) (int, error) {
	var (
		bits    uint64 // unread bits, the next at the top
		nbits   uint
		in      int
		o       int
		width   uint  = lzwMinWidth
		hi      int32 = lzwEOI // the code the next string gets
		valid         = false  // whether the previous code's string may be extended
		lastPos int32          // where the previous code's string was written
		lastLen int32
	)
	for o < len(dst) {
		if nbits < width {
			if in+8 <= len(src) {
				// Eight bytes at once; those that did not fit whole are
				// ORed in again, to the same bits, by the next refill.
				bits |= binary.BigEndian.Uint64(src[in:]) >> nbits
				k := (63 - nbits) >> 3
				in += int(k)
				nbits += k << 3
			} else {
				for nbits < width {
					if in == len(src) {
						return o, errLZWData
					}
					bits |= uint64(src[in]) << (56 - nbits)
					in++
					nbits += 8
				}
			}
		}
		code := int32(bits >> (64 - width))
		bits <<= width
		nbits -= width
		var pos, n int32
		switch {
		case code < lzwClear:
			dst[o] = byte(code)
			pos, n = int32(o), 1
			o++
		case code == lzwClear:
			width, hi, valid = lzwMinWidth, lzwEOI, false
			continue
		case code == lzwEOI:
			return o, errLZWData
		case code < hi && code >= lzwFirst:
			s, l := d.start[code], d.length[code]
			pos, n = int32(o), l
			if l <= 8 && o+8 <= len(dst) {
				// Most strings are short: one 8-byte move, whose bytes
				// past the string are overwritten by the codes after it.
				binary.LittleEndian.PutUint64(dst[o:], binary.LittleEndian.Uint64(dst[s:]))
				o += int(l)
			} else {
				o += copy(dst[o:], dst[s:s+l])
			}
		case code == hi && valid:
			// The string being defined: the previous one followed by its
			// own first byte.
			pos, n = int32(o), lastLen+1
			o += copy(dst[o:], dst[lastPos:lastPos+lastLen])
			if o < len(dst) {
				dst[o] = dst[lastPos]
				o++
			}
		default:
			return o, errLZWCode
		}
		if valid {
			d.start[hi], d.length[hi] = lastPos, lastLen+1
		}
		lastPos, lastLen, valid = pos, n, true
		hi++
		if hi+1 >= 1<<width { // TIFF's early change
			if width == 12 {
				valid = false // the table is full until the next clear code
			} else {
				width++
			}
		}
	}
	return o, nil
}
