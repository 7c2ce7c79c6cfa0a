package jpeg

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/nd"
)

// Image is a decoded image, or one to encode: Height rows of Width pixels
// of Channels interleaved 8-bit samples (1: gray; 3: R, G, B), row-major.
type Image struct {
	Width, Height, Channels int
	Pix                     []uint8
}

// MaxRatio bounds the decoded samples one byte of a file may claim:
// Decode refuses a header whose width × height × channels exceeds
// MaxRatio × len(data) + 64 KiB before allocating anything.
const MaxRatio = 2000

// Decode decodes a baseline (or extended sequential) Huffman-coded 8-bit
// JPEG of one component (gray) or three (YCbCr, or RGB where the file
// says so) with the samples libjpeg-turbo gives by default: the accurate
// integer IDCT, fancy upsampling and its YCbCr → RGB tables. What it does
// not decode (see the package doc) is an *UnsupportedError; a damaged
// file a *FormatError.
func Decode(data []byte) (_ *Image, err error) {
	defer nd.RecoverPanic(&err)
	d, err := parse(data)
	if err != nil {
		return nil, err
	}
	return d.decode()
}

// DecodeConfig parses data up to its first scan and reports the image's
// size and channels, with the errors Decode would give for the headers.
func DecodeConfig(data []byte) (width, height, channels int, err error) {
	d, err := parse(data)
	if err != nil {
		return 0, 0, 0, err
	}
	return d.width, d.height, d.ncomp, nil
}

type component struct {
	id     uint8
	h, v   int   // sampling factors, 1 or 2 (1 for a lone component)
	tq     uint8 // quantization table
	td, ta uint8 // Huffman tables, from the scan
	bw, bh int   // blocks across and down, padded to whole MCUs
	dw, dh int   // libjpeg's downsampled_width and downsampled_height
	rowOff int   // first block of this component in an MCU row's buffer
	stride int   // of plane: bw·8
	plane  []byte
}

type decoder struct {
	data          []byte
	width, height int
	ncomp         int
	comps         [3]component
	hmax, vmax    int
	mcusX, mcusY  int
	rowBlocks     int // blocks in an MCU row, all components
	restart       int
	quant         [4]*[64]int32
	dcTab, acTab  [4]*huffDecoder
	jfif, adobe   bool
	transform     byte
	rgb           bool // the file's components are R, G, B (no conversion)
	fused420      bool // YCbCr 4:2:0 with chroma wider than 2: yccH2V2
	scan          []int
	frame         bool

	entropy []byte    // the scan's data, unstuffed, each segment followed by 8 zero bytes
	segs    []segment // restart intervals
}

type segment struct{ start, end int }

func truncated() error {
	return &FormatError{Msg: "truncated file", Err: io.ErrUnexpectedEOF}
}

// parse reads the markers up to the first scan and that scan's extent.
func parse(data []byte) (*decoder, error) {
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 {
		return nil, formatErr("missing SOI marker")
	}
	d := &decoder{data: data}
	pos := 2
	for {
		// libjpeg's next_marker: skip any garbage, then fill bytes.
		for pos < len(data) && data[pos] != 0xff {
			pos++
		}
		for pos < len(data) && data[pos] == 0xff {
			pos++
		}
		if pos >= len(data) {
			return nil, truncated()
		}
		m := data[pos]
		pos++
		switch {
		case m == 0x00 || m == 0x01 || (m >= 0xd0 && m <= 0xd7):
			continue // not a marker, TEM, RSTn: no length
		case m == 0xd8:
			return nil, formatErr("duplicate SOI marker")
		case m == 0xd9:
			return nil, formatErr("no image before EOI")
		}
		if pos+2 > len(data) {
			return nil, truncated()
		}
		n := int(binary.BigEndian.Uint16(data[pos:]))
		if n < 2 {
			return nil, formatErr("bad marker length")
		}
		if pos+n > len(data) {
			return nil, truncated()
		}
		seg := data[pos+2 : pos+n]
		pos += n
		var err error
		switch m {
		case 0xc0, 0xc1:
			err = d.parseSOF(seg)
		case 0xc2, 0xc6, 0xca, 0xce:
			err = unsupported("progressive JPEG")
		case 0xc3, 0xc7, 0xcb, 0xcf:
			err = unsupported("lossless JPEG")
		case 0xc5, 0xcd:
			err = unsupported("hierarchical JPEG")
		case 0xc9:
			err = unsupported("arithmetic-coded JPEG")
		case 0xc4:
			err = d.parseDHT(seg)
		case 0xdb:
			err = d.parseDQT(seg)
		case 0xdd:
			if len(seg) != 2 {
				err = formatErr("bad DRI length")
			} else {
				d.restart = int(binary.BigEndian.Uint16(seg))
			}
		case 0xe0:
			if len(seg) >= 14 && string(seg[:5]) == "JFIF\x00" {
				d.jfif = true
			}
		case 0xee:
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				d.adobe, d.transform = true, seg[11]
			}
		case 0xda:
			if err := d.parseSOS(seg); err != nil {
				return nil, err
			}
			if err := d.findScan(pos); err != nil {
				return nil, err
			}
			return d, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (d *decoder) parseSOF(s []byte) error {
	if d.frame {
		return formatErr("more than one frame header")
	}
	if len(s) < 6 {
		return formatErr("bad SOF length")
	}
	if s[0] != 8 {
		return unsupported("precision %d", s[0])
	}
	d.height = int(binary.BigEndian.Uint16(s[1:]))
	d.width = int(binary.BigEndian.Uint16(s[3:]))
	nc := int(s[5])
	if len(s) != 6+3*nc {
		return formatErr("bad SOF length")
	}
	if d.width == 0 {
		return formatErr("zero width")
	}
	if d.height == 0 {
		return unsupported("height defined by a DNL marker")
	}
	if nc != 1 && nc != 3 {
		return unsupported("%d components", nc)
	}
	d.ncomp = nc
	d.hmax, d.vmax = 1, 1
	for i := range nc {
		c := &d.comps[i]
		c.id = s[6+3*i]
		c.h, c.v = int(s[7+3*i]>>4), int(s[7+3*i]&15)
		c.tq = s[8+3*i]
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return formatErr("bad component parameters")
		}
		for j := range i {
			if d.comps[j].id == c.id {
				return formatErr("duplicate component id")
			}
		}
		if c.h > 2 || c.v > 2 {
			return unsupported("sampling factors %dx%d", c.h, c.v)
		}
		if nc == 1 { // a lone component is coded one block at a time
			c.h, c.v = 1, 1
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
	}
	d.frame = true
	return nil
}

func (d *decoder) parseDQT(s []byte) error {
	for len(s) > 0 {
		pq, tq := s[0]>>4, s[0]&15
		if tq > 3 || pq > 1 {
			return formatErr("bad DQT table")
		}
		n := 64 << pq
		if len(s) < 1+n {
			return formatErr("bad DQT length")
		}
		t := new([64]int32)
		for k := range 64 {
			var v uint16
			if pq == 0 {
				v = uint16(s[1+k])
			} else {
				v = binary.BigEndian.Uint16(s[1+2*k:])
			}
			// libjpeg-turbo's ISLOW_MULT_TYPE is a short in its SIMD builds.
			t[zigzag[k]] = int32(int16(v))
		}
		d.quant[tq] = t
		s = s[1+n:]
	}
	return nil
}

func (d *decoder) parseDHT(s []byte) error {
	for len(s) > 0 {
		if len(s) < 17 {
			return formatErr("bad DHT length")
		}
		tc, th := s[0]>>4, s[0]&15
		if tc > 1 || th > 3 {
			return formatErr("bad DHT table")
		}
		var spec huffSpec
		copy(spec.count[:], s[1:17])
		n := 0
		for _, c := range spec.count {
			n += int(c)
		}
		if n > 256 || len(s) < 17+n {
			return formatErr("bad DHT length")
		}
		spec.vals = s[17 : 17+n]
		t, err := newHuffDecoder(&spec, tc == 0)
		if err != nil {
			return err
		}
		if tc == 0 {
			d.dcTab[th] = t
		} else {
			d.acTab[th] = t
		}
		s = s[17+n:]
	}
	return nil
}

func (d *decoder) parseSOS(s []byte) error {
	if !d.frame {
		return formatErr("SOS before SOF")
	}
	if len(s) < 1 || len(s) != 4+2*int(s[0]) {
		return formatErr("bad SOS length")
	}
	ns := int(s[0])
	if ns != d.ncomp {
		return unsupported("scan of %d of %d components", ns, d.ncomp)
	}
	for i := range ns {
		id, t := s[1+2*i], s[2+2*i]
		ci := -1
		for j := range d.ncomp {
			if d.comps[j].id == id {
				ci = j
			}
		}
		if ci < 0 {
			return formatErr("scan component not in the frame")
		}
		for _, j := range d.scan {
			if j == ci {
				return formatErr("duplicate scan component")
			}
		}
		c := &d.comps[ci]
		c.td, c.ta = t>>4, t&15
		if c.td > 3 || c.ta > 3 {
			return formatErr("bad Huffman table selector")
		}
		d.scan = append(d.scan, ci)
	}
	// libjpeg-turbo uses the standard tables for slots 0 and 1 where a
	// file defines none (motion-JPEG frames).
	for i := range 2 {
		if d.dcTab[i] == nil {
			d.dcTab[i], _ = newHuffDecoder(&stdHuff[0][i], true)
		}
		if d.acTab[i] == nil {
			d.acTab[i], _ = newHuffDecoder(&stdHuff[1][i], false)
		}
	}
	for _, ci := range d.scan {
		c := &d.comps[ci]
		if d.dcTab[c.td] == nil || d.acTab[c.ta] == nil {
			return formatErr("undefined Huffman table")
		}
		if d.quant[c.tq] == nil {
			return formatErr("undefined quantization table")
		}
	}
	// Geometry.
	if d.ncomp == 1 {
		d.mcusX, d.mcusY = (d.width+7)/8, (d.height+7)/8
	} else {
		d.mcusX = (d.width + 8*d.hmax - 1) / (8 * d.hmax)
		d.mcusY = (d.height + 8*d.vmax - 1) / (8 * d.vmax)
	}
	d.rowBlocks = 0
	for i := range d.ncomp {
		c := &d.comps[i]
		c.bw, c.bh = d.mcusX*c.h, d.mcusY*c.v
		c.dw = (d.width*c.h + d.hmax - 1) / d.hmax
		c.dh = (d.height*c.v + d.vmax - 1) / d.vmax
		c.rowOff = d.rowBlocks
		c.stride = c.bw * 8
		d.rowBlocks += c.bw * c.v
	}
	if d.ncomp == 3 {
		switch {
		case d.jfif:
		case d.adobe:
			d.rgb = d.transform == 0
		default:
			d.rgb = d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B'
		}
		c0, c1, c2 := &d.comps[0], &d.comps[1], &d.comps[2]
		d.fused420 = !d.rgb && c0.h == 2 && c0.v == 2 && c1.h == 1 && c1.v == 1 && c2.h == 1 && c2.v == 1 && c1.dw > 2
	}
	return nil
}

// findScan finds the end of the scan's entropy-coded data, which starts
// at pos, and copies it to d.entropy with the stuffed zero bytes removed,
// split at the restart markers.
func (d *decoder) findScan(pos int) error {
	// Refuse what could not be held before allocating for it.
	samples := int64(d.width) * int64(d.height) * int64(d.ncomp)
	if samples > MaxRatio*int64(len(d.data))+1<<16 {
		return formatErr("the header claims %dx%d pixels, more than a %d-byte file can hold", d.width, d.height, len(d.data))
	}
	data := d.data
	out := make([]byte, 0, len(data)-pos+64)
	start := 0
	for {
		i := bytes.IndexByte(data[pos:], 0xff)
		if i < 0 {
			return truncated()
		}
		out = append(out, data[pos:pos+i]...)
		q := pos + i + 1
		for q < len(data) && data[q] == 0xff {
			q++
		}
		if q >= len(data) {
			return truncated()
		}
		m := data[q]
		pos = q + 1
		if m == 0 {
			out = append(out, 0xff)
			continue
		}
		d.segs = append(d.segs, segment{start, len(out)})
		out = append(out, 0, 0, 0, 0, 0, 0, 0, 0)
		start = len(out)
		if m < 0xd0 || m > 0xd7 {
			break
		}
	}
	d.entropy = out
	total := d.mcusX * d.mcusY
	if d.restart > 0 {
		if need := (total + d.restart - 1) / d.restart; len(d.segs) < need {
			return formatErr("%d restart intervals, want %d", len(d.segs), need)
		}
	} else if len(d.segs) > 1 {
		// RST markers without DRI: libjpeg stops at the first.
		d.segs = d.segs[:1]
	}
	return nil
}

// coefRows is where the entropy decoder puts an MCU row's coefficients:
// rowBlocks blocks of 64 in natural order, and for each block the zigzag
// index of its last nonzero AC coefficient (0: the DC alone).
type coefRows struct {
	coef []int16
	last []uint8
}

// scanReader decodes a scan's MCUs, resumably: the bit position and DC
// predictions persist between calls.
type scanReader struct {
	d    *decoder
	seg  segment
	pos  int
	acc  uint64
	n    uint
	pred [3]int32
}

// reset starts restart interval (segment) k.
func (st *scanReader) reset(k int) {
	st.seg = st.d.segs[k]
	st.pos, st.acc, st.n = st.seg.start, 0, 0
	st.pred = [3]int32{}
}

// decodeRange decodes MCUs m0 ≤ m < m1, resetting at each restart
// interval that begins among them.
func (st *scanReader) decodeRange(m0, m1 int, rows func(int) coefRows) error {
	R := st.d.restart
	for m := m0; m < m1; {
		end := m1
		if R > 0 {
			if m%R == 0 {
				st.reset(m / R)
			}
			end = min(m1, (m/R+1)*R)
		}
		if err := st.decode(m, end, rows); err != nil {
			return err
		}
		m = end
	}
	return nil
}

// decode decodes MCUs m0 ≤ m < m1 (numbered across the image) from the
// current segment into rows(m / mcusX), called once per MCU row touched.
func (st *scanReader) decode(m0, m1 int, rows func(int) coefRows) error {
	d := st.d
	seg := st.seg
	buf := d.entropy[:seg.end+8]
	pos, acc, n, pred := st.pos, st.acc, st.n, st.pred

	type blockSpec struct {
		dc, ac *huffDecoder
		comp   int
		off    int // block in the row buffer at MCU column 0
		step   int // blocks per MCU column
	}
	var specs [10]blockSpec
	nb := 0
	for _, ci := range d.scan {
		c := &d.comps[ci]
		for iy := range c.v {
			for ix := range c.h {
				specs[nb] = blockSpec{d.dcTab[c.td], d.acTab[c.ta], ci, c.rowOff + iy*c.bw + ix, c.h}
				nb++
			}
		}
	}
	var err error
mcus:
	for m := m0; m < m1; {
		my := m / d.mcusX
		r := rows(my)
		coef, last := r.coef[:d.rowBlocks*64], r.last[:d.rowBlocks]
		end := min(m1, (my+1)*d.mcusX)
		for ; m < end; m++ {
			mx := m - my*d.mcusX
			for bi := range nb {
				bs := &specs[bi]
				b := bs.off + mx*bs.step
				blk := (*[64]int16)(coef[b*64 : b*64+64])
				*blk = [64]int16{}

				// DC difference.
				if n < 32 {
					if pos+8 <= len(buf) {
						acc |= binary.BigEndian.Uint64(buf[pos:]) >> n
						pos += int((63 - n) >> 3)
						n |= 56
					} else {
						for n <= 56 {
							var c byte
							if pos < len(buf) {
								c = buf[pos]
							}
							pos++
							acc |= uint64(c) << (56 - n)
							n += 8
						}
					}
				}
				e := bs.dc.fast[acc>>(64-lookBits)]
				var diff int32
				if e&fastValue != 0 {
					diff = int32(e) >> 16
					acc <<= e & 31
					n -= uint(e & 31)
				} else {
					var s, l uint
					if e != 0 {
						s, l = uint(e>>8&0xff), uint(e&31)
					} else {
						sym, ll, ok := slowDecode(bs.dc, acc)
						if !ok {
							err = formatErr("bad Huffman code")
							break mcus
						}
						s, l = uint(sym), ll
					}
					acc <<= l
					n -= l
					x := int32(acc >> (64 - s))
					acc <<= s
					n -= s
					diff = extend(x, s)
				}
				pred[bs.comp] += diff
				blk[0] = int16(pred[bs.comp])

				// AC coefficients.
				kmax := 0
				for k := 1; k < 64; k++ {
					if n < 32 {
						if pos+8 <= len(buf) {
							acc |= binary.BigEndian.Uint64(buf[pos:]) >> n
							pos += int((63 - n) >> 3)
							n |= 56
						} else {
							for n <= 56 {
								var c byte
								if pos < len(buf) {
									c = buf[pos]
								}
								pos++
								acc |= uint64(c) << (56 - n)
								n += 8
							}
						}
					}
					e := bs.ac.fast[acc>>(64-lookBits)]
					if e&fastValue != 0 {
						k += int(e>>8) & 0xff
						blk[zigzag[k&127]] = int16(int32(e) >> 16)
						kmax = k
						acc <<= e & 31
						n -= uint(e & 31)
						continue
					}
					var sym, l uint
					if e != 0 {
						sym, l = uint(e>>8&0xff), uint(e&31)
					} else {
						s8, ll, ok := slowDecode(bs.ac, acc)
						if !ok {
							err = formatErr("bad Huffman code")
							break mcus
						}
						sym, l = uint(s8), ll
					}
					acc <<= l
					n -= l
					s := sym & 15
					if s == 0 {
						if sym>>4 != 15 {
							break // EOB
						}
						k += 15
						continue
					}
					k += int(sym >> 4)
					x := int32(acc >> (64 - s))
					acc <<= s
					n -= s
					blk[zigzag[k&127]] = int16(extend(x, s))
					kmax = k
				}
				last[b] = uint8(min(kmax, 255))
			}
		}
		// Consumed more than the segment holds: the data ended early.
		if 8*(pos-seg.start)-int(n) > 8*(seg.end-seg.start) {
			err = formatErr("entropy-coded data ends early")
			break
		}
	}
	st.pos, st.acc, st.n, st.pred = pos, acc, n, pred
	return err
}

// slowDecode decodes a code longer than lookBits bits at the top of acc.
func slowDecode(t *huffDecoder, acc uint64) (uint8, uint, bool) {
	for l := uint(lookBits + 1); l <= 16; l++ {
		code := int32(acc >> (64 - l))
		if code <= t.maxcode[l] {
			return t.vals[(t.valoff[l]+code)&255], l, true
		}
	}
	return 0, 0, false
}

// rowWork is one worker's scratch for converting rows.
type rowWork struct {
	up [3][]byte // upsampled rows
}

func (d *decoder) newRowWork() *rowWork {
	w := &rowWork{}
	for i := range d.ncomp {
		w.up[i] = make([]byte, 2*d.comps[i].dw+16)
	}
	return w
}

// needsContext says whether converting an MCU row needs the rows of its
// neighbours (vertical fancy upsampling).
func (d *decoder) needsContext() bool {
	for i := range d.ncomp {
		if d.comps[i].v < d.vmax {
			return true
		}
	}
	return false
}

// idctRow transforms MCU row i's blocks into the component planes.
func (d *decoder) idctRow(i int, r coefRows) {
	for ci := range d.ncomp {
		c := &d.comps[ci]
		q := d.quant[c.tq]
		for by := range c.v {
			b0 := c.rowOff + by*c.bw
			o := (i*c.v + by) * 8 * c.stride
			for bx := range c.bw {
				b := b0 + bx
				blk := (*[64]int16)(r.coef[b*64 : b*64+64])
				if r.last[b] == 0 {
					idctDC(blk[0], q[0], c.plane, o+bx*8, c.stride)
				} else {
					idct(blk, q, c.plane, o+bx*8, c.stride)
				}
			}
		}
	}
}

// compRow returns component ci's samples for output row y, upsampled to
// at least the image width.
func (d *decoder) compRow(ci, y int, w *rowWork) []byte {
	c := &d.comps[ci]
	row := func(j int) []byte { return c.plane[j*c.stride : j*c.stride+c.stride] }
	h2 := c.h < d.hmax
	if c.v == d.vmax {
		if !h2 {
			return row(y)
		}
		if c.dw > 2 {
			upH2V1(w.up[ci], row(y), c.dw)
		} else {
			upH2Box(w.up[ci], row(y), c.dw)
		}
		return w.up[ci]
	}
	cy := y >> 1
	if h2 && c.dw <= 2 { // h2v2_upsample: no vertical filtering
		upH2Box(w.up[ci], row(cy), c.dw)
		return w.up[ci]
	}
	var far, bias int
	if y&1 == 0 {
		far, bias = max(cy-1, 0), 1
	} else {
		far, bias = min(cy+1, c.dh-1), 2
	}
	if h2 {
		upH2V2(w.up[ci], row(cy), row(far), c.dw)
	} else {
		upH1V2(w.up[ci], row(cy), row(far), c.dw, bias)
	}
	return w.up[ci]
}

// convertRow writes the output rows of MCU row i.
func (d *decoder) convertRow(i int, pix []byte, w *rowWork) {
	mh := 8 * d.vmax
	y1 := min(d.height, (i+1)*mh)
	W := d.width
	for y := i * mh; y < y1; y++ {
		if d.ncomp == 1 {
			copy(pix[y*W:(y+1)*W], d.comps[0].plane[y*d.comps[0].stride:])
			continue
		}
		dst := pix[3*y*W : 3*(y+1)*W]
		if d.fused420 {
			c0, c1, c2 := &d.comps[0], &d.comps[1], &d.comps[2]
			cy, far := y>>1, min((y>>1)+1, c1.dh-1)
			if y&1 == 0 {
				far = max(cy-1, 0)
			}
			yccH2V2(dst, c0.plane[y*c0.stride:], c1.plane[cy*c1.stride:], c1.plane[far*c1.stride:],
				c2.plane[cy*c2.stride:], c2.plane[far*c2.stride:], c1.dw, W)
			continue
		}
		a, b, c := d.compRow(0, y, w), d.compRow(1, y, w), d.compRow(2, y, w)
		if d.rgb {
			interleave3(dst, a, b, c, W)
		} else {
			yccToRGB(dst, a, b, c, W)
		}
	}
}

// decode runs the entropy decoding and the conversion of rows on all
// cores: with restart intervals, the intervals are decoded in parallel
// and then the rows converted in parallel; without, one goroutine decodes
// MCU rows in order into a ring of buffers while the others transform and
// convert the rows it has finished.
func (d *decoder) decode() (*Image, error) {
	for i := range d.ncomp {
		c := &d.comps[i]
		c.plane = make([]byte, c.stride*c.bh*8)
	}
	img := &Image{Width: d.width, Height: d.height, Channels: d.ncomp}
	img.Pix = make([]byte, d.width*d.height*d.ncomp)
	workers := runtime.GOMAXPROCS(0)
	rows := d.mcusY
	ctx := d.needsContext()

	idctDone := make([]atomic.Bool, rows)
	converted := make([]atomic.Bool, rows)
	// finish marks row i transformed and converts the rows that were
	// waiting for it.
	finish := func(i int, w *rowWork) {
		idctDone[i].Store(true)
		for j := max(0, i-1); j <= min(rows-1, i+1); j++ {
			if !idctDone[j].Load() {
				continue
			}
			if ctx && (j > 0 && !idctDone[j-1].Load() || j < rows-1 && !idctDone[j+1].Load()) {
				continue
			}
			if converted[j].CompareAndSwap(false, true) {
				d.convertRow(j, img.Pix, w)
			}
		}
	}

	rowLen := d.rowBlocks
	if d.restart > 0 && len(d.segs) > 1 && workers > 1 {
		coef := make([]int16, rows*rowLen*64)
		last := make([]uint8, rows*rowLen)
		at := func(i int) coefRows {
			return coefRows{coef[i*rowLen*64 : (i+1)*rowLen*64], last[i*rowLen : (i+1)*rowLen]}
		}
		total := d.mcusX * d.mcusY
		nseg := (total + d.restart - 1) / d.restart
		var firstErr error
		var mu sync.Mutex
		failed := func() bool { mu.Lock(); defer mu.Unlock(); return firstErr != nil }
		err := nd.ForEach(workers, nseg, failed, func(_, k int) {
			st := &scanReader{d: d}
			st.reset(k)
			if err := st.decode(k*d.restart, min(total, (k+1)*d.restart), at); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
		if err == nil {
			err = firstErr
		}
		if err != nil {
			return nil, err
		}
		works := make([]*rowWork, workers)
		if err := nd.ForEach(workers, rows, nil, func(wk, i int) {
			if works[wk] == nil {
				works[wk] = d.newRowWork()
			}
			d.idctRow(i, at(i))
			finish(i, works[wk])
		}); err != nil {
			return nil, err
		}
		return img, nil
	}

	// One segment (or the first of each interval in turn, without
	// parallel decoding), pipelined.
	slots := 1
	if workers > 1 {
		slots = min(rows, 4*workers)
	}
	coef := make([]int16, slots*rowLen*64)
	last := make([]uint8, slots*rowLen)
	at := func(s int) coefRows {
		return coefRows{coef[s*rowLen*64 : (s+1)*rowLen*64], last[s*rowLen : (s+1)*rowLen]}
	}
	type job struct{ row, slot int }
	free := make(chan int, slots)
	for s := range slots {
		free <- s
	}
	ready := make(chan job, rows)
	process := func(j job, w *rowWork) {
		if testHookRow != nil {
			testHookRow(j.row)
		}
		d.idctRow(j.row, at(j.slot))
		free <- j.slot
		finish(j.row, w)
	}
	var wg sync.WaitGroup
	fail := newFailure()
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer fail.recover()
			w := d.newRowWork()
			for j := range ready {
				process(j, w)
			}
		}()
	}
	w := d.newRowWork()
	// The main goroutine decodes the rows and then helps finish them;
	// a panic of its own is recovered like a worker's, and ready closed
	// even then, so that the workers end before this returns.
	err := func() error {
		defer close(ready)
		defer fail.recover()
		return d.decodeRows(func(i int, decodeInto func(coefRows) error) error {
			var s int
			select {
			case s = <-free:
			case <-fail.done: // a worker's slot will not come back
				return fail.err
			}
			if err := decodeInto(at(s)); err != nil {
				free <- s
				return err
			}
			if workers == 1 {
				process(job{i, s}, w)
			} else {
				ready <- job{i, s}
			}
			return nil
		})
	}()
	func() {
		defer fail.recover()
		for j := range ready {
			process(j, w)
		}
	}()
	wg.Wait()
	if fail.err != nil {
		return nil, fail.err
	}
	if err != nil {
		return nil, err
	}
	return img, nil
}

// decodeRows decodes the MCU rows in order, each through emit, which
// gives decodeInto the buffer to fill.
func (d *decoder) decodeRows(emit func(i int, decodeInto func(coefRows) error) error) error {
	total := d.mcusX * d.mcusY
	st := &scanReader{d: d}
	st.reset(0)
	for i := range d.mcusY {
		err := emit(i, func(r coefRows) error {
			return st.decodeRange(i*d.mcusX, min(total, (i+1)*d.mcusX), func(int) coefRows { return r })
		})
		if err != nil {
			return err
		}
	}
	return nil
}
