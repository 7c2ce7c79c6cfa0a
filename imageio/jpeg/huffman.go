package jpeg

// lookBits is how many bits the decoding tables look ahead: a code of up
// to lookBits bits is decoded by one table lookup.
const lookBits = 9

// Entries of huffDecoder.fast: 0 means the code is longer than lookBits
// (decode it with maxcode); otherwise the low 5 bits are the number of bits
// to consume and
//   - with fastValue set: the code and the extra bits of its coefficient
//     fit in lookBits; bits 8..15 hold the run (AC) and bits 16..31 the
//     coefficient (AC) or difference (DC), sign-extended;
//   - without: bits 8..15 hold the symbol, and only the code is consumed.
const fastValue = 1 << 5

// huffDecoder is a decoding table built from a DHT segment (libjpeg's
// jpeg_make_d_derived_tbl, with a lookahead table that also decodes the
// value where it fits).
type huffDecoder struct {
	fast    [1 << lookBits]uint32
	maxcode [18]int32 // largest code of each length, -1 if none; [17] sentinel
	valoff  [17]int32 // index in vals of the first code of each length, minus that code
	vals    [256]uint8
}

// newHuffDecoder builds the table for spec; dc says whether it codes DC
// differences (whose symbols libjpeg limits to 15).
func newHuffDecoder(spec *huffSpec, dc bool) (*huffDecoder, error) {
	t := &huffDecoder{}
	n := 0
	for _, c := range spec.count {
		n += int(c)
	}
	if n > 256 || n > len(spec.vals) {
		return nil, formatErr("bad Huffman table")
	}
	copy(t.vals[:], spec.vals[:n])
	if dc {
		for _, v := range spec.vals[:n] {
			if v > 15 {
				return nil, formatErr("bad Huffman table")
			}
		}
	}
	code, p := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		c := int32(spec.count[l-1])
		if c == 0 {
			t.maxcode[l] = -1
		} else {
			t.valoff[l] = p - code
			for range c {
				if code >= 1<<l { // codes of this length overflow it
					return nil, formatErr("bad Huffman table")
				}
				sym := t.vals[p]
				if l <= lookBits {
					t.fillFast(uint32(code), l, sym, dc)
				}
				code++
				p++
			}
			t.maxcode[l] = code - 1
		}
		// libjpeg refuses a table whose codes do not fit (the all-ones
		// code of a length is not allowed either).
		if c > 0 && code >= 1<<l {
			return nil, formatErr("bad Huffman table")
		}
		code <<= 1
	}
	t.maxcode[17] = 1<<31 - 1
	return t, nil
}

func (t *huffDecoder) fillFast(code uint32, l int, sym uint8, dc bool) {
	run, size := uint32(sym>>4), int(sym&15)
	if dc {
		run, size = 0, int(sym)
	}
	shift := lookBits - l
	for i := uint32(0); i < 1<<shift; i++ {
		idx := code<<shift | i
		var e uint32
		if (size > 0 || dc) && l+size <= lookBits {
			var v int32
			if size > 0 {
				x := int32(idx>>(lookBits-l-size)) & (1<<size - 1)
				v = extend(x, uint(size))
			}
			e = uint32(v)<<16 | run<<8 | fastValue | uint32(l+size)
		} else {
			e = uint32(sym)<<8 | uint32(l)
		}
		t.fast[idx] = e
	}
}

// extend is the JPEG standard's EXTEND (F.12): the s-bit value x as a
// signed coefficient.
func extend(x int32, s uint) int32 {
	if s == 0 {
		return 0
	}
	if x < 1<<(s-1) {
		return x - 1<<s + 1
	}
	return x
}

// huffEncoder gives each symbol's code and length (libjpeg's
// jpeg_make_c_derived_tbl).
type huffEncoder struct {
	code [256]uint32
	size [256]uint8
}

func newHuffEncoder(spec *huffSpec) *huffEncoder {
	t := &huffEncoder{}
	code, p := uint32(0), 0
	for l := 1; l <= 16; l++ {
		for range spec.count[l-1] {
			sym := spec.vals[p]
			t.code[sym], t.size[sym] = code, uint8(l)
			code++
			p++
		}
		code <<= 1
	}
	return t
}
