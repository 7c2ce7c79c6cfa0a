package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// source is a TIFF file being read: where its bytes are, how many there
// are, and how its header says to read numbers and offsets.
type source struct {
	r     io.ReaderAt
	size  int64
	order binary.ByteOrder
	big   bool // BigTIFF: 8-byte offsets and counts, 20-byte IFD entries

	metaBudget uint64 // bytes of IFDs and tag values still to be read; see readMeta
}

// maxIFDEntries bounds the entries of one IFD; a classic TIFF cannot have
// more than 65535, and no real BigTIFF has more.
const maxIFDEntries = 1 << 16

// readAt reads n bytes at off into buf (grown as needed), refusing ranges
// outside the file before allocating. what names the bytes for errors.
func (s *source) readAt(buf []byte, off, n uint64, what string) ([]byte, error) {
	if off > uint64(s.size) || n > uint64(s.size)-off {
		return nil, formatErrorf("%s (%d bytes at offset %d) lies beyond the end of the %d-byte file", what, n, off, s.size)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	k, err := s.r.ReadAt(buf, int64(off))
	switch {
	case uint64(k) == n:
		return buf, nil // ReadAt may report io.EOF along with a full buffer
	case err == nil || errors.Is(err, io.EOF):
		return nil, &FormatError{Msg: "truncated " + what, Err: io.ErrUnexpectedEOF}
	default:
		return nil, fmt.Errorf("tiff: reading %s: %w", what, err)
	}
}

// readMeta is readAt for IFDs and tag values, which are charged to
// metaBudget: IFDs of a valid file do not overlap, so a chain whose IFDs
// and value arrays add up to far more than the file holds is made of
// IFDs that share bytes, a construction whose only use is to make a small
// file cost a reader much time and memory.
func (s *source) readMeta(off, n uint64, what string) ([]byte, error) {
	if n > s.metaBudget {
		return nil, formatErrorf("%s: the IFDs and their values add up to more than twice the file size (IFDs that share bytes)", what)
	}
	s.metaBudget -= n
	return s.readAt(nil, off, n, what)
}

// readHeader reads the byte-order mark, the magic number and the offset of
// the first IFD.
func (s *source) readHeader() (uint64, error) {
	if s.size < 8 {
		return 0, &FormatError{Msg: fmt.Sprintf("a %d-byte file is too short for a TIFF header", s.size), Err: io.ErrUnexpectedEOF}
	}
	h, err := s.readAt(nil, 0, min(16, uint64(s.size)), "header")
	if err != nil {
		return 0, err
	}
	switch string(h[:2]) {
	case "II":
		s.order = binary.LittleEndian
	case "MM":
		s.order = binary.BigEndian
	default:
		return 0, formatErrorf("not a TIFF file (starts with %q, not \"II\" or \"MM\")", h[:2])
	}
	switch magic := s.order.Uint16(h[2:]); magic {
	case 42:
		return uint64(s.order.Uint32(h[4:])), nil
	case 43:
		if len(h) < 16 {
			return 0, &FormatError{Msg: "truncated BigTIFF header", Err: io.ErrUnexpectedEOF}
		}
		if s.order.Uint16(h[4:]) != 8 || s.order.Uint16(h[6:]) != 0 {
			return 0, formatErrorf("BigTIFF header gives offset size %d, not 8", s.order.Uint16(h[4:]))
		}
		s.big = true
		return s.order.Uint64(h[8:]), nil
	default:
		return 0, formatErrorf("not a TIFF file (magic number %d, not 42 or 43)", magic)
	}
}

// entry is one field of an IFD: its type, count, and either its bytes (when
// they fit in the entry) or their offset.
type entry struct {
	typ    uint16
	count  uint64
	inline []byte // the value bytes when they fit in the entry, else nil
	offset uint64
}

// ifd is one image file directory: its position in the chain and its
// fields by tag.
type ifd struct {
	index  int // 0 for the first IFD of the chain
	fields map[uint16]entry
}

// typeSize is the size in bytes of one value of a field type, or 0 for a
// type this package never needs to read.
func typeSize(typ uint16) uint64 {
	switch typ {
	case typeByte, typeASCII, typeUndef:
		return 1
	case typeShort:
		return 2
	case typeLong, typeIFD:
		return 4
	case typeRational, typeLong8, typeIFD8:
		return 8
	}
	return 0
}

// readIFD reads the IFD at off and returns it with the offset of the next.
func (s *source) readIFD(off uint64, index int) (ifd, uint64, error) {
	what := fmt.Sprintf("IFD %d", index)
	countSize, entrySize, offSize := uint64(2), uint64(12), uint64(4)
	if s.big {
		countSize, entrySize, offSize = 8, 20, 8
	}
	b, err := s.readMeta(off, countSize, what+" entry count")
	if err != nil {
		return ifd{}, 0, err
	}
	n := uint64(s.order.Uint16(b))
	if s.big {
		n = s.order.Uint64(b)
	}
	if n == 0 || n > maxIFDEntries {
		return ifd{}, 0, formatErrorf("%s at offset %d claims %d entries", what, off, n)
	}
	b, err = s.readMeta(off+countSize, n*entrySize+offSize, what)
	if err != nil {
		return ifd{}, 0, err
	}
	d := ifd{index: index, fields: make(map[uint16]entry, n)}
	for i := uint64(0); i < n; i++ {
		e := b[i*entrySize : (i+1)*entrySize]
		tag := s.order.Uint16(e)
		if _, dup := d.fields[tag]; dup {
			continue // libtiff too keeps the first of repeated tags
		}
		f := entry{typ: s.order.Uint16(e[2:])}
		valueField := e[8:]
		if s.big {
			f.count = s.order.Uint64(e[4:])
			valueField = e[12:]
		} else {
			f.count = uint64(s.order.Uint32(e[4:]))
		}
		if size := typeSize(f.typ); size != 0 && f.count <= uint64(len(valueField))/size {
			f.inline = valueField[:f.count*size]
		} else if s.big {
			f.offset = s.order.Uint64(valueField)
		} else {
			f.offset = uint64(s.order.Uint32(valueField))
		}
		d.fields[tag] = f
	}
	tail := b[n*entrySize:]
	next := uint64(s.order.Uint32(tail))
	if s.big {
		next = s.order.Uint64(tail)
	}
	return d, next, nil
}

// uints returns the values of field tag, which must be of an unsigned
// integer type and have between 1 and maxCount values. ok is false when
// the IFD lacks the tag.
func (s *source) uints(d ifd, tag uint16, maxCount uint64) (v []uint64, ok bool, err error) {
	f, ok := d.fields[tag]
	if !ok {
		return nil, false, nil
	}
	switch f.typ {
	case typeByte, typeShort, typeLong, typeIFD, typeLong8, typeIFD8:
	default:
		return nil, true, formatErrorf("IFD %d: tag %d has field type %d, not an unsigned integer", d.index, tag, f.typ)
	}
	if f.count == 0 || f.count > maxCount {
		return nil, true, formatErrorf("IFD %d: tag %d has %d values, expected 1 to %d", d.index, tag, f.count, maxCount)
	}
	size := typeSize(f.typ)
	b := f.inline
	if b == nil {
		if b, err = s.readMeta(f.offset, f.count*size, fmt.Sprintf("IFD %d: values of tag %d", d.index, tag)); err != nil {
			return nil, true, err
		}
	}
	v = make([]uint64, f.count)
	for i := range v {
		v[i] = getUint(b[uint64(i)*size:], int(size), s.order)
	}
	return v, true, nil
}

// value returns the single value of field tag, or def when the IFD lacks it.
func (s *source) value(d ifd, tag uint16, def uint64) (uint64, error) {
	v, ok, err := s.uints(d, tag, 1)
	if !ok || err != nil {
		return def, err
	}
	return v[0], nil
}

// pageList walks the IFD chain from first, refusing loops, and returns
// every IFD in order.
func (s *source) pageList(first uint64) ([]ifd, error) {
	var ifds []ifd
	seen := map[uint64]bool{}
	for off := first; off != 0; {
		if seen[off] {
			return nil, formatErrorf("the IFD chain loops back to offset %d after %d IFDs", off, len(ifds))
		}
		seen[off] = true
		d, next, err := s.readIFD(off, len(ifds))
		if err != nil {
			return nil, err
		}
		ifds = append(ifds, d)
		off = next
	}
	if len(ifds) == 0 {
		return nil, formatErrorf("the header points to no IFD")
	}
	return ifds, nil
}
