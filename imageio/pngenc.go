package imageio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/ndconv/ndconv/nd"
)

// DefaultPNGCompression is the zlib level WritePNG uses: 1, OpenCV's
// cv2.imwrite default, which with it filters every row with Sub. Larger
// levels give smaller files for much more time.
const DefaultPNGCompression = 1

// PNGNoCompression is WriteOptions.PNGCompression's value for zlib level 0
// (stored, not compressed), since 0 there means DefaultPNGCompression.
const PNGNoCompression = -1

// PNG row filter types (PNG specification §9.2).
const (
	pngFilterNone = iota
	pngFilterSub
	pngFilterUp
	pngFilterAverage
	pngFilterPaeth
)

// pngSegmentBytes is about how many filtered bytes of image data each
// worker compresses as one piece of the zlib stream. A fixed size, not one
// per core, keeps the bytes written the same on every machine; each piece
// starts without the previous one's 32 KiB window, which costs a few
// hundred bytes a MiB. A variable so that tests can make many pieces.
var pngSegmentBytes = 1 << 20

// pngIDATBytes bounds each IDAT chunk's data (a variable for tests).
var pngIDATBytes = 1 << 20

// WritePNGLevel is WritePNG at zlib level 0 (stored) to 9 (smallest).
// Level 1 filters every row with Sub as OpenCV does by default; the other
// levels choose each row's filter as libpng does by default (the filter
// whose output has the least sum of absolute values), and level 0 filters
// none.
func WritePNGLevel(w io.Writer, a nd.Array, level int) error {
	if level < 0 || level > 9 {
		return &UnsupportedError{Format: ".png", What: "compression level", Value: fmt.Sprint(level), Detail: "PNG compression is a zlib level from 0 to 9"}
	}
	h, wd, c, err := imageShape(a, ".png")
	if err != nil {
		return err
	}
	if h == 0 || wd == 0 {
		return &UnsupportedError{Format: ".png", What: "image shape", Value: fmt.Sprint(a.Shape), Detail: "a PNG has at least one pixel"}
	}
	colorType := [5]byte{1: pngGray, 2: pngGrayAlpha, 3: pngRGB, 4: pngRGBA}[c]
	return encodePNG(w, wd, h, c, colorType, imageSamples(a, pngSixteenBit(a.DType())), level)
}

// pngSegment is one worker's piece of the zlib stream: its deflate bytes,
// the Adler-32 and length of the filtered bytes it holds.
type pngSegment struct {
	z     []byte
	adler uint32
	n     int
	err   error
	done  chan struct{}
}

// encodePNG writes a non-interlaced PNG of c samples per pixel, 8 or 16
// bits as s's type says. Rows are filtered and deflated in pieces of about
// pngSegmentBytes on every core; the pieces, each ended by a sync flush
// but the last, are one zlib stream whose checksum is combined from
// theirs. They are written in order, as they finish, in IDAT chunks.
func encodePNG(w io.Writer, width, height, c int, colorType byte, s nd.Array, level int) error {
	bytesPerSample := s.DType().Size()
	bpp := c * bytesPerSample
	rowBytes := width * bpp
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8] = byte(8 * bytesPerSample)
	ihdr[9] = colorType

	rowsPer := max(1, pngSegmentBytes/(1+rowBytes))
	nseg := (height + rowsPer - 1) / rowsPer
	segs := make([]pngSegment, nseg)
	for i := range segs {
		segs[i].done = make(chan struct{})
	}
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range min(nseg, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			e := newPNGRowEncoder(s, width, c, level)
			defer e.release()
			for {
				i := int(next.Add(1) - 1)
				if i >= nseg || stop.Load() {
					return
				}
				y0, y1 := i*rowsPer, min(height, (i+1)*rowsPer)
				segs[i].z, segs[i].adler, segs[i].n, segs[i].err = e.segment(y0, y1, i == nseg-1)
				close(segs[i].done)
			}
		})
	}
	err := writePNGSegments(w, ihdr[:], segs, level)
	stop.Store(true)
	wg.Wait()
	return err
}

// writePNGSegments writes the PNG: signature, IHDR, the zlib stream in
// IDAT chunks as each segment finishes, and IEND.
func writePNGSegments(w io.Writer, ihdr []byte, segs []pngSegment, level int) error {
	cw := &pngChunkWriter{w: w}
	cw.write(pngSignature)
	cw.chunk("IHDR", ihdr)
	// The zlib header: deflate with a 32 KiB window; FLEVEL as the level.
	cmf, flg := byte(0x78), [10]byte{0, 0, 1, 1, 1, 1, 2, 3, 3, 3}[level]<<6
	flg += byte(31 - (int(cmf)<<8|int(flg))%31)
	idatBuf := idatBuffers.Get().(*[]byte)
	if cap(*idatBuf) < pngIDATBytes {
		*idatBuf = make([]byte, 0, pngIDATBytes)
	}
	defer idatBuffers.Put(idatBuf)
	idat := append((*idatBuf)[:0:pngIDATBytes], cmf, flg) // chunks of pngIDATBytes
	var adler uint32 = 1
	for i := range segs {
		<-segs[i].done
		if segs[i].err != nil {
			return segs[i].err
		}
		adler = adler32Combine(adler, segs[i].adler, segs[i].n)
		for z := segs[i].z; len(z) > 0; {
			k := copy(idat[len(idat):cap(idat)], z)
			idat, z = idat[:len(idat)+k], z[k:]
			if len(idat) == cap(idat) {
				cw.chunk("IDAT", idat)
				idat = idat[:0]
			}
		}
		segs[i].z = nil
		if cw.err != nil {
			return cw.err
		}
	}
	idat = binary.BigEndian.AppendUint32(idat, adler)
	cw.chunk("IDAT", idat)
	cw.chunk("IEND", nil)
	return cw.err
}

// idatBuffers hold an IDAT chunk being filled, one per image written at
// once (1 MiB each: allocated and zeroed per file, they cost a small
// image more than its filtering).
var idatBuffers = sync.Pool{New: func() any { return new([]byte) }}

// pngChunkWriter writes PNG chunks, keeping the first error.
type pngChunkWriter struct {
	w   io.Writer
	err error
}

func (cw *pngChunkWriter) write(b []byte) {
	if cw.err == nil {
		_, cw.err = cw.w.Write(b)
	}
}

func (cw *pngChunkWriter) chunk(kind string, data []byte) {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(data)))
	copy(head[4:], kind)
	crc := crc32.Update(crc32.ChecksumIEEE(head[4:]), crc32.IEEETable, data)
	cw.write(head[:])
	cw.write(data)
	cw.write(binary.BigEndian.AppendUint32(nil, crc))
}

// adler32Combine returns the Adler-32 of A followed by B from A's (a),
// B's (b) and B's length, as zlib's adler32_combine does.
func adler32Combine(a, b uint32, lenB int) uint32 {
	const base = 65521
	rem := uint32(lenB % base)
	sum1 := a & 0xffff
	sum2 := uint32((uint64(rem) * uint64(sum1)) % base)
	sum1 += (b & 0xffff) + base - 1
	sum2 += (a >> 16) + (b >> 16) + base - rem
	if sum1 >= base {
		sum1 -= base
	}
	if sum1 >= base {
		sum1 -= base
	}
	if sum2 >= 2*base {
		sum2 -= 2 * base
	}
	if sum2 >= base {
		sum2 -= base
	}
	return sum1 | sum2<<16
}

// pngRowEncoder filters and deflates rows of one image; each worker has
// its own, reused for every segment it takes.
type pngRowEncoder struct {
	s               nd.Array
	width, c, level int
	bpp             int
	*pngScratch
}

// pngScratch is what row encoders keep from image to image (pngScratches):
// a klauspost deflater is megabytes of state, zeroed when made, and a
// folder of 512² images made two per file (3.4 MB allocated a file;
// zeroing and the GC took half of its encoding). Reset deflaters write
// the same bytes as new ones.
type pngScratch struct {
	prev, cur []byte   // raw rows, big-endian samples
	try       [][]byte // each filter's output, for the heuristic
	filtered  bytes.Buffer
	out, hout bytes.Buffer
	fw, hw    *flate.Writer // at fwLevel, and Huffman only
	fwLevel   int
}

var pngScratches = sync.Pool{New: func() any { return new(pngScratch) }}

func newPNGRowEncoder(s nd.Array, width, c, level int) *pngRowEncoder {
	bpp := c * s.DType().Size()
	e := &pngRowEncoder{s: s, width: width, c: c, level: level, bpp: bpp, pngScratch: pngScratches.Get().(*pngScratch)}
	e.prev, e.cur = resized(e.prev, width*bpp), resized(e.cur, width*bpp)
	if level > 1 {
		e.try = slices.Grow(e.try[:0], 5)[:5]
		for i := range e.try {
			e.try[i] = resized(e.try[i], 1+width*bpp)
		}
	}
	if e.fw != nil && e.fwLevel != level {
		e.fw = nil
	}
	e.fwLevel = level
	return e
}

// release gives the encoder's scratch back for the next image.
func (e *pngRowEncoder) release() {
	if e.pngScratch != nil {
		pngScratches.Put(e.pngScratch)
		e.pngScratch = nil
	}
}

// resized is b with length n, reallocated only if too small.
func resized(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// row puts row y's samples, big-endian, in dst.
func (e *pngRowEncoder) row(dst []byte, y int) {
	n := e.width * e.c
	switch d := e.s.Data.(type) {
	case []uint8:
		copy(dst, d[y*n:(y+1)*n])
	case []uint16:
		for i, v := range d[y*n : (y+1)*n] {
			binary.BigEndian.PutUint16(dst[2*i:], v)
		}
	}
}

// segment filters rows y0 to y1 and deflates them, ending with a sync
// flush or, for the last segment, the final block.
func (e *pngRowEncoder) segment(y0, y1 int, last bool) ([]byte, uint32, int, error) {
	rowBytes := e.width * e.bpp
	if y0 == 0 {
		clear(e.prev)
	} else {
		e.row(e.prev, y0-1)
	}
	e.filtered.Reset()
	e.filtered.Grow((y1 - y0) * (1 + rowBytes))
	for y := y0; y < y1; y++ {
		e.row(e.cur, y)
		e.filtered.Write(e.filter())
		e.prev, e.cur = e.cur, e.prev
	}
	f := e.filtered.Bytes()
	if e.level == 0 {
		z, err := deflateSegment(&e.fw, &e.out, f, e.level, last)
		if err != nil {
			return nil, 0, 0, err
		}
		return bytes.Clone(z), adler32.Checksum(f), len(f), nil
	}
	// klauspost/compress's fast levels store a piece whole when their
	// matcher finds few repeats, as on a photograph's filtered rows, where
	// Huffman coding alone (like zlib's Z_RLE, OpenCV's default strategy,
	// without the runs) saves a third or more: the smaller is kept. The
	// matcher runs only where a sample of the piece says it may win: on
	// smoothed photographs it never did (200 of 200 of issue 27's 512²
	// outputs) and took 2.2 ms a file against Huffman coding's 0.95.
	tryMatches := e.matchesMayWin(f) // first: its sample reuses the buffers
	z, err := deflateSegment(&e.hw, &e.hout, f, flate.HuffmanOnly, last)
	if err != nil {
		return nil, 0, 0, err
	}
	if tryMatches {
		lz, err := deflateSegment(&e.fw, &e.out, f, e.level, last)
		if err != nil {
			return nil, 0, 0, err
		}
		if len(lz) <= len(z) {
			z = lz
		}
	}
	// A copy: the buffers are reused by this worker's next segment.
	return bytes.Clone(z), adler32.Checksum(f), len(f), nil
}

// pngSampleBytes is the piece's sample matchesMayWin compresses both ways
// (its first sixteenth, at least this much; a smaller piece is tried
// whole).
const pngSampleBytes = 16 << 10

// matchesMayWin reports whether deflating f at the encoder's level (LZ77
// matches) may come out smaller than Huffman coding alone: whether it did,
// or came within 10%, on f's first sixteenth. A rule of the bytes alone, so
// the file is the same on every machine.
func (e *pngRowEncoder) matchesMayWin(f []byte) bool {
	n := max(pngSampleBytes, len(f)/16)
	if n*2 > len(f) {
		return true // small: the whole piece costs little more than a sample
	}
	lz, err := deflateSegment(&e.fw, &e.out, f[:n], e.level, true)
	if err != nil {
		return true
	}
	lzLen := len(lz)
	h, err := deflateSegment(&e.hw, &e.hout, f[:n], flate.HuffmanOnly, true)
	if err != nil {
		return true
	}
	return lzLen*10 < len(h)*11
}

// deflateSegment deflates f into out with *fw (made at level on first
// use), ending with the final block if last, else with a sync flush so
// that the next piece can follow it in the same stream.
func deflateSegment(fw **flate.Writer, out *bytes.Buffer, f []byte, level int, last bool) ([]byte, error) {
	out.Reset()
	if *fw == nil {
		w, err := flate.NewWriter(out, level)
		if err != nil {
			return nil, err
		}
		*fw = w
	} else {
		(*fw).Reset(out)
	}
	if _, err := (*fw).Write(f); err != nil {
		return nil, err
	}
	var err error
	if last {
		err = (*fw).Close()
	} else {
		err = (*fw).Flush()
	}
	return out.Bytes(), err
}

// filter returns e.cur filtered against e.prev, the filter type first:
// Sub at level 1, None at level 0, else the filter whose output bytes,
// read as signed, have the least sum of absolute values (libpng's
// default heuristic).
func (e *pngRowEncoder) filter() []byte {
	switch e.level {
	case 0:
		out := e.filtered.AvailableBuffer()[:1+len(e.cur)]
		out[0] = pngFilterNone
		copy(out[1:], e.cur)
		return out
	case 1:
		out := e.filtered.AvailableBuffer()[:1+len(e.cur)]
		filterSub(out, e.cur, e.bpp)
		return out
	}
	filterNone(e.try[0], e.cur)
	filterSub(e.try[1], e.cur, e.bpp)
	filterUp(e.try[2], e.cur, e.prev)
	filterAverage(e.try[3], e.cur, e.prev, e.bpp)
	filterPaeth(e.try[4], e.cur, e.prev, e.bpp)
	best, bestSum := 0, -1
	for f, out := range e.try {
		sum := 0
		for _, b := range out[1:] {
			sum += absInt8(b)
		}
		if bestSum < 0 || sum < bestSum {
			best, bestSum = f, sum
		}
	}
	return e.try[best]
}

func absInt8(b byte) int {
	if b < 128 {
		return int(b)
	}
	return 256 - int(b)
}

func filterNone(out, cur []byte) {
	out[0] = pngFilterNone
	copy(out[1:], cur)
}

func filterSub(out, cur []byte, bpp int) {
	out[0] = pngFilterSub
	o := out[1 : 1+len(cur)]
	copy(o[:bpp], cur[:bpp])
	for i := bpp; i < len(cur); i++ {
		o[i] = cur[i] - cur[i-bpp]
	}
}

func filterUp(out, cur, prev []byte) {
	out[0] = pngFilterUp
	o := out[1 : 1+len(cur)]
	for i := range cur {
		o[i] = cur[i] - prev[i]
	}
}

func filterAverage(out, cur, prev []byte, bpp int) {
	out[0] = pngFilterAverage
	o := out[1 : 1+len(cur)]
	for i := range bpp {
		o[i] = cur[i] - prev[i]/2
	}
	for i := bpp; i < len(cur); i++ {
		o[i] = cur[i] - byte((int(cur[i-bpp])+int(prev[i]))/2)
	}
}

func filterPaeth(out, cur, prev []byte, bpp int) {
	out[0] = pngFilterPaeth
	o := out[1 : 1+len(cur)]
	for i := range bpp {
		o[i] = cur[i] - prev[i] // Paeth of (0, b, 0) is b
	}
	for i := bpp; i < len(cur); i++ {
		o[i] = cur[i] - paeth(cur[i-bpp], prev[i], prev[i-bpp])
	}
}

// paeth is the Paeth predictor of a (left), b (above) and c (upper left).
func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := absInt(p-int(a)), absInt(p-int(b)), absInt(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
