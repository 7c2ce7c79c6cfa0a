package jpeg

import (
	"encoding/binary"
	"io"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/nd"
)

// Sampling is the chroma subsampling of a colour JPEG: the luma's
// sampling factors, the chroma's being 1×1.
type Sampling int

const (
	Sampling420 Sampling = iota // 2×2: libjpeg's and OpenCV's default
	Sampling444                 // 1×1: no subsampling
	Sampling422                 // 2×1: half the columns
	Sampling440                 // 1×2: half the rows
)

func (s Sampling) factors() (h, v int) {
	switch s {
	case Sampling444:
		return 1, 1
	case Sampling422:
		return 2, 1
	case Sampling440:
		return 1, 2
	}
	return 2, 2
}

// DefaultQuality is the quality Encode uses for 0: OpenCV's default.
const DefaultQuality = 95

// Options are the encoder's settings.
type Options struct {
	Quality  int      // 1 to 100, as libjpeg's jpeg_set_quality; 0 means DefaultQuality
	Sampling Sampling // of colour images; gray ones have one component
}

// Encode writes img as a baseline JPEG with libjpeg's defaults, as
// cv2.imencode(".jpg", …) does with the same quality: JFIF 1.01, the
// quality-scaled Annex K quantization tables, standard Huffman tables,
// RGB converted to YCbCr with libjpeg's tables and subsampled 4:2:0 by
// its box filter, the accurate integer DCT. The bytes are OpenCV's.
func Encode(w io.Writer, img *Image, opt *Options) error {
	b, err := AppendEncode(nil, img, opt)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// encComp is one component being encoded.
type encComp struct {
	h, v     int
	bw, bh   int // libjpeg's width_in_blocks, height_in_blocks
	tq       int
	dc, ac   *huffEncoder
	q        *quantTable
	rowOff   int // first block in an MCU row's coefficient buffer
	perRow   int // blocks per MCU row: mcusX·h·v
	stripW   int // samples per strip row (downsampled)
	stripOff int // of its strip in the worker's strip buffer
}

type encoder struct {
	img          *Image
	ncomp        int
	comps        [3]encComp
	hmax, vmax   int
	mcusX, mcusY int
	wp           int // full-resolution strip width: mcusX·8·hmax
	rowBlocks    int
	quant        [2][64]uint16
}

// AppendEncode appends the JPEG encoding of img to dst.
func AppendEncode(dst []byte, img *Image, opt *Options) (_ []byte, err error) {
	defer nd.RecoverPanic(&err)
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Quality == 0 {
		o.Quality = DefaultQuality
	}
	if o.Quality < 1 || o.Quality > 100 {
		return dst, unsupported("quality %d", o.Quality)
	}
	if o.Sampling < Sampling420 || o.Sampling > Sampling440 {
		return dst, unsupported("sampling %d", o.Sampling)
	}
	if img.Channels != 1 && img.Channels != 3 {
		return dst, unsupported("%d channels", img.Channels)
	}
	if img.Width < 1 || img.Height < 1 || img.Width > 65535 || img.Height > 65535 {
		return dst, unsupported("size %dx%d", img.Width, img.Height)
	}
	if len(img.Pix) < img.Width*img.Height*img.Channels {
		return dst, unsupported("%d samples for %dx%dx%d", len(img.Pix), img.Width, img.Height, img.Channels)
	}
	e := &encoder{img: img, ncomp: img.Channels}
	e.quant[0], e.quant[1] = scaledQuant(0, o.Quality), scaledQuant(1, o.Quality)
	qt := [2]*quantTable{newQuantTable(&e.quant[0]), newQuantTable(&e.quant[1])}
	hd := [2][2]*huffEncoder{
		{newHuffEncoder(&stdHuff[0][0]), newHuffEncoder(&stdHuff[0][1])},
		{newHuffEncoder(&stdHuff[1][0]), newHuffEncoder(&stdHuff[1][1])},
	}
	W, H := img.Width, img.Height
	e.hmax, e.vmax = 1, 1
	if e.ncomp == 3 {
		e.hmax, e.vmax = o.Sampling.factors()
	}
	e.mcusX = (W + 8*e.hmax - 1) / (8 * e.hmax)
	e.mcusY = (H + 8*e.vmax - 1) / (8 * e.vmax)
	e.wp = e.mcusX * 8 * e.hmax
	off := 0
	for i := range e.ncomp {
		c := &e.comps[i]
		t := min(i, 1)
		c.h, c.v = 1, 1
		if i == 0 {
			c.h, c.v = e.hmax, e.vmax
		}
		c.bw = (W*c.h + 8*e.hmax - 1) / (8 * e.hmax)
		c.bh = (H*c.v + 8*e.vmax - 1) / (8 * e.vmax)
		c.tq = t
		c.q = qt[t]
		c.dc, c.ac = hd[0][t], hd[1][t]
		c.rowOff = e.rowBlocks
		c.perRow = e.mcusX * c.h * c.v
		e.rowBlocks += c.perRow
		c.stripW = e.mcusX * 8 * c.h
		c.stripOff = off
		off += c.stripW * 8 * c.v
	}
	out, err := e.scan(e.header(dst))
	if err != nil {
		return nil, err
	}
	return append(out, 0xff, 0xd9), nil
}

// header appends the markers libjpeg writes before the entropy-coded
// data, in its order (jcmarker.c): SOI, JFIF APP0, one DQT per table,
// SOF0, one DHT per table (DC then AC of each component, each once), SOS.
func (e *encoder) header(b []byte) []byte {
	b = append(b, 0xff, 0xd8)
	b = append(b, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	nt := min(e.ncomp, 2)
	for t := range nt {
		b = append(b, 0xff, 0xdb, 0, 67, byte(t))
		for k := range 64 {
			b = append(b, byte(e.quant[t][zigzag[k]]))
		}
	}
	b = append(b, 0xff, 0xc0, 0, byte(8+3*e.ncomp), 8)
	b = binary.BigEndian.AppendUint16(b, uint16(e.img.Height))
	b = binary.BigEndian.AppendUint16(b, uint16(e.img.Width))
	b = append(b, byte(e.ncomp))
	for i := range e.ncomp {
		c := &e.comps[i]
		b = append(b, byte(i+1), byte(c.h<<4|c.v), byte(c.tq))
	}
	for t := range nt {
		for class := range 2 {
			spec := &stdHuff[class][t]
			b = append(b, 0xff, 0xc4)
			b = binary.BigEndian.AppendUint16(b, uint16(2+1+16+len(spec.vals)))
			b = append(b, byte(class<<4|t))
			b = append(b, spec.count[:]...)
			b = append(b, spec.vals...)
		}
	}
	b = append(b, 0xff, 0xda, 0, byte(6+2*e.ncomp), byte(e.ncomp))
	for i := range e.ncomp {
		t := min(i, 1)
		b = append(b, byte(i+1), byte(t<<4|t))
	}
	return append(b, 0, 63, 0)
}

// encWork is one worker's scratch.
type encWork struct {
	full  [3][]byte // full-resolution strip rows: 8·vmax rows of wp samples
	strip []byte    // the components' (downsampled) strips
	coef  []int16   // an MCU row's blocks, zigzag order
	mask  []uint64  // nonzero coefficients of each block
	ws    [64]int32
}

func (e *encoder) newWork() *encWork {
	w := &encWork{}
	n := 8 * e.vmax * e.wp
	for i := range e.ncomp {
		w.full[i] = make([]byte, n)
	}
	sz := 0
	for i := range e.ncomp {
		c := &e.comps[i]
		sz = c.stripOff + c.stripW*8*c.v
	}
	w.strip = make([]byte, sz)
	w.coef = make([]int16, e.rowBlocks*64)
	w.mask = make([]uint64, e.rowBlocks)
	return w
}

// prepare converts and downsamples MCU row i into w's strips, as
// libjpeg's prep and downsample controllers do (jcprepct.c, jcsample.c):
// rows past the bottom repeat the last row, columns past the right edge
// the last column, and downsampled rows past the bottom the last
// downsampled row.
func (e *encoder) prepare(i int, w *encWork) {
	img := e.img
	W, H, wp := img.Width, img.Height, e.wp
	rows := 8 * e.vmax
	y0 := i * rows
	for r := range rows {
		sy := min(y0+r, H-1)
		if r > 0 && sy == min(y0+r-1, H-1) {
			for c := range e.ncomp {
				copy(w.full[c][r*wp:(r+1)*wp], w.full[c][(r-1)*wp:r*wp])
			}
			continue
		}
		if e.ncomp == 1 {
			row := w.full[0][r*wp : (r+1)*wp]
			copy(row, img.Pix[sy*W:(sy+1)*W])
			fillRight(row, W)
			continue
		}
		y, cb, cr := w.full[0][r*wp:(r+1)*wp], w.full[1][r*wp:(r+1)*wp], w.full[2][r*wp:(r+1)*wp]
		rgbToYCC(y, cb, cr, img.Pix[3*sy*W:3*(sy+1)*W], W)
		fillRight(y, W)
		fillRight(cb, W)
		fillRight(cr, W)
	}
	// Luma (or gray) is the full-resolution strip itself.
	c0 := &e.comps[0]
	copy(w.strip[c0.stripOff:c0.stripOff+c0.stripW*rows], w.full[0][:wp*rows])
	if e.ncomp == 1 {
		return
	}
	// Chroma: downsampled by (hmax, vmax).
	ch := (H + e.vmax - 1) / e.vmax // downsampled rows in the image
	for ci := 1; ci < 3; ci++ {
		c := &e.comps[ci]
		src := w.full[ci]
		sw := c.stripW
		for j := range 8 {
			out := w.strip[c.stripOff+j*sw : c.stripOff+(j+1)*sw]
			if e.vmax == 1 {
				if e.hmax == 1 {
					copy(out, src[j*wp:(j+1)*wp])
				} else {
					downH2V1(out, src[j*wp:(j+1)*wp], sw)
				}
				continue
			}
			// Vertical 2: the rows of downsampled row j, or of the last
			// downsampled row where j is past it.
			a := 2*min(i*8+j, ch-1) - y0
			r0, r1 := src[a*wp:(a+1)*wp], src[(a+1)*wp:(a+2)*wp]
			if e.hmax == 2 {
				downH2V2(out, r0, r1, sw)
			} else {
				downV2(out, r0, r1, sw)
			}
		}
	}
}

// fillRight repeats row[w-1] to the end of row (expand_right_edge).
func fillRight(row []byte, w int) {
	v := row[w-1]
	for x := w; x < len(row); x++ {
		row[x] = v
	}
}

// downV2 is libjpeg's int_downsample for factors 1×2: the mean of two
// rows, rounded up at a half ((a + b + 1) / 2).
func downV2(out, in0, in1 []byte, n int) {
	out, in0, in1 = out[:n], in0[:n], in1[:n]
	for i := range out {
		out[i] = byte((int(in0[i]) + int(in1[i]) + 1) >> 1)
	}
}

// transform computes the quantized coefficients of MCU row i's blocks
// from w's strips, in MCU order, with libjpeg's dummy blocks (jccoefct.c)
// past the components' last block columns and rows: no AC, and the DC of
// the block before in the MCU.
func (e *encoder) transform(i int, w *encWork) {
	b := 0
	for mx := range e.mcusX {
		for ci := range e.ncomp {
			c := &e.comps[ci]
			sw := c.stripW
			for by := range c.v {
				for bx := range c.h {
					gx, gy := mx*c.h+bx, i*c.v+by
					zz := (*[64]int16)(w.coef[b*64 : b*64+64])
					if gx < c.bw && gy < c.bh {
						w.mask[b] = fdctQuant(w.strip, c.stripOff+by*8*sw+gx*8, sw, c.q, &w.ws, zz)
					} else {
						dc := w.coef[(b-1)*64]
						*zz = [64]int16{}
						zz[0] = dc
						w.mask[b] = 0
						if dc != 0 {
							w.mask[b] = 1
						}
					}
					b++
				}
			}
		}
	}
}

// rowBits is one MCU row's entropy-coded bits, not yet byte-stuffed:
// whole bytes, then n < 32 bits in the low bits of tail.
type rowBits struct {
	bytes []byte
	tail  uint64
	n     uint
}

// huffRow Huffman-codes MCU row i's blocks (after transform) into r,
// starting from the DC predictions pred, which it updates (jchuff.c
// encode_one_block with the standard tables). Each code is written
// without a branch: the pending bits are stored as 8 bytes at the end of
// the output, which advances by the whole bytes among them.
func (e *encoder) huffRow(w *encWork, pred *[3]int32, r *rowBits) {
	buf := r.bytes[:cap(r.bytes)]
	p := 0
	var acc uint64
	var n uint
	b := 0
	for range e.mcusX {
		for ci := range e.ncomp {
			c := &e.comps[ci]
			dcT, acT := c.dc, c.ac
			for range c.h * c.v {
				if p+512 > len(buf) {
					buf = append(buf[:p], make([]byte, len(buf)+4096)...)
					buf = buf[:cap(buf)]
				}
				zz := (*[64]int16)(w.coef[b*64 : b*64+64])
				mask := w.mask[b]
				b++
				// DC difference.
				dc := int32(zz[0])
				diff := dc - pred[ci]
				pred[ci] = dc
				sg := diff >> 31
				nb := uint(bits.Len32(uint32((diff ^ sg) - sg)))
				diff += sg
				sz := uint(dcT.size[nb&15]) + nb
				acc = acc<<sz | uint64(dcT.code[nb&15])<<nb | uint64(uint32(diff)&(1<<nb-1))
				n += sz
				binary.BigEndian.PutUint64(buf[p:p+8], acc<<(64-n))
				p += int(n >> 3)
				n &= 7
				// AC coefficients, by the nonzero mask.
				mask &^= 1
				k := 0
				for mask != 0 {
					z := bits.TrailingZeros64(mask)
					mask &= mask - 1
					run := z - k - 1
					k = z
					for run > 15 {
						acc = acc<<acT.size[0xf0] | uint64(acT.code[0xf0])
						n += uint(acT.size[0xf0])
						binary.BigEndian.PutUint64(buf[p:p+8], acc<<(64-n))
						p += int(n >> 3)
						n &= 7
						run -= 16
					}
					v := int32(zz[z&63])
					sg := v >> 31
					nb := uint(bits.Len32(uint32((v ^ sg) - sg)))
					v += sg
					sym := byte(run<<4) | byte(nb)
					sz := uint(acT.size[sym]) + nb
					acc = acc<<sz | uint64(acT.code[sym])<<nb | uint64(uint32(v)&(1<<nb-1))
					n += sz
					binary.BigEndian.PutUint64(buf[p:p+8], acc<<(64-n))
					p += int(n >> 3)
					n &= 7
				}
				if k != 63 {
					acc = acc<<acT.size[0] | uint64(acT.code[0])
					n += uint(acT.size[0])
					binary.BigEndian.PutUint64(buf[p:p+8], acc<<(64-n))
					p += int(n >> 3)
					n &= 7
				}
			}
		}
	}
	r.bytes, r.tail, r.n = buf[:p], acc&(1<<n-1), n
}

// stuffer writes entropy-coded bits with libjpeg's byte stuffing (a zero
// after each 0xFF), four bytes at a time where none is 0xFF.
type stuffer struct {
	out []byte
	acc uint64
	n   uint // pending bits, < 32
}

func (s *stuffer) put32(w uint32) {
	s.acc = s.acc<<32 | uint64(w)
	v := uint32(s.acc >> s.n)
	// Has v a 0xFF byte? (Some byte of ^v zero.)
	x := ^v
	if (x-0x01010101)&^x&0x80808080 == 0 {
		s.out = binary.BigEndian.AppendUint32(s.out, v)
		return
	}
	for sh := 24; sh >= 0; sh -= 8 {
		c := byte(v >> sh)
		s.out = append(s.out, c)
		if c == 0xff {
			s.out = append(s.out, 0)
		}
	}
}

// putBits adds n ≤ 32 bits.
func (s *stuffer) putBits(v uint64, n uint) {
	s.acc = s.acc<<n | v
	s.n += n
	for s.n >= 8 {
		s.n -= 8
		c := byte(s.acc >> s.n)
		s.out = append(s.out, c)
		if c == 0xff {
			s.out = append(s.out, 0)
		}
	}
}

// row appends one MCU row's bits.
func (s *stuffer) row(r *rowBits) {
	b := r.bytes
	for len(b) >= 4 {
		s.put32(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	for _, c := range b {
		s.putBits(uint64(c), 8)
	}
	s.putBits(r.tail, r.n)
}

// flush pads the last byte with ones (jchuff.c flush_bits).
func (s *stuffer) flush() {
	if s.n > 0 {
		pad := 8 - s.n
		s.putBits(1<<pad-1, pad)
	}
}

// scan appends the entropy-coded data. MCU rows are converted,
// transformed, quantized and Huffman-coded on all cores, each row into
// its own bits (a row's first DC difference waits for the row before's
// last DC values); the rows' bits are then joined and byte-stuffed in
// order, which makes the bytes those of one serial pass.
func (e *encoder) scan(out []byte) ([]byte, error) {
	rows := e.mcusY
	res := make([]rowBits, rows)
	lastDC := make([][3]int32, rows)
	dcReady := make([]chan struct{}, rows)
	done := make([]chan struct{}, rows)
	for i := range rows {
		dcReady[i] = make(chan struct{})
		done[i] = make(chan struct{})
	}
	var next atomic.Int64
	workers := min(runtime.GOMAXPROCS(0), rows)
	var wg sync.WaitGroup
	fail := newFailure()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer fail.recover()
			w := e.newWork()
			for {
				i := int(next.Add(1) - 1)
				if i >= rows {
					return
				}
				if testHookRow != nil {
					testHookRow(i)
				}
				e.prepare(i, w)
				e.transform(i, w)
				// The row's last DC values, for the next row.
				var last [3]int32
				b := 0
				for range e.mcusX {
					for ci := range e.ncomp {
						c := &e.comps[ci]
						b += c.h * c.v
						last[ci] = int32(w.coef[(b-1)*64])
					}
				}
				lastDC[i] = last
				close(dcReady[i])
				var pred [3]int32
				if i > 0 {
					select {
					case <-dcReady[i-1]:
					case <-fail.done:
						return
					}
					pred = lastDC[i-1]
				}
				res[i].bytes = make([]byte, 0, e.rowBlocks*16)
				e.huffRow(w, &pred, &res[i])
				close(done[i])
			}
		}()
	}
	// The workers wait on nothing of this goroutine's: they end, however
	// it leaves.
	defer wg.Wait()
	s := stuffer{out: out}
	for i := range rows {
		select {
		case <-done[i]:
		case <-fail.done:
			return nil, fail.err
		}
		s.row(&res[i])
		res[i] = rowBits{}
	}
	s.flush()
	return s.out, nil
}
