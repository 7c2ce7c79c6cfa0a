package tiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/klauspost/compress/zlib"

	"github.com/ndconv/ndconv/nd"
)

// Image is a decoded TIFF: the samples, and how many of the last axis are
// the samples of one pixel.
type Image struct {
	// Array is one page as H×W (Channels 0) or H×W×C, or several pages as
	// P×H×W or P×H×W×C.
	Array nd.Array
	// Channels is 0 for one sample per pixel, or 2, 3 or 4 when the last
	// axis of Array holds the samples of a pixel (gray and alpha, RGB,
	// RGB and alpha).
	Channels int
}

// ReadFile reads the TIFF file at path with Read.
func ReadFile(path string) (Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return Image{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Image{}, err
	}
	return Read(f, fi.Size())
}

// Read decodes every full-resolution page of the size-byte TIFF file held
// by r into one array; reduced-resolution images are skipped. The pages
// must agree in size, channels and element type. See the package
// documentation for what is supported and how samples map to dtypes.
//
// Every offset, count and size in the file is checked against the file
// size and nd.MaxElements before anything is allocated for it.
func Read(r io.ReaderAt, size int64) (Image, error) {
	if size < 0 {
		return Image{}, formatErrorf("negative file size %d", size)
	}
	s := &source{r: r, size: size, metaBudget: 2*uint64(size) + fileSlack}
	first, err := s.readHeader()
	if err != nil {
		return Image{}, err
	}
	ifds, err := s.pageList(first)
	if err != nil {
		return Image{}, err
	}
	var pages []*page
	var decoded uint64
	for _, d := range ifds {
		p, err := parsePage(s, d)
		if err != nil {
			return Image{}, err
		}
		if p == nil {
			continue
		}
		if len(pages) > 0 && p.describe() != pages[0].describe() {
			return Image{}, &UnsupportedError{What: "page", Value: fmt.Sprintf("IFD %d", p.ifd),
				Detail: fmt.Sprintf("it is %s, IFD %d is %s; ndconv stacks only pages that agree", p.describe(), pages[0].ifd, pages[0].describe())}
		}
		pages = append(pages, p)
		decoded = addBounded(decoded, p.decodedBytes())
	}
	if len(pages) == 0 {
		return Image{}, formatErrorf("no full-resolution image among %d IFDs", len(ifds))
	}
	if size < 1<<50 && decoded > maxExpansion*uint64(size)+fileSlack {
		return Image{}, formatErrorf("the pages claim %d decoded bytes, more than a %d-byte file can hold", decoded, size)
	}

	p0 := pages[0]
	shape := []int{p0.height, p0.width}
	if len(pages) > 1 {
		shape = append([]int{len(pages)}, shape...)
	}
	if c := p0.channels(); c != 0 {
		shape = append(shape, c)
	}
	if _, err := nd.NumElements(shape); err != nil {
		return Image{}, &UnsupportedError{What: "image size", Value: shapeString(shape), Detail: err.Error()}
	}
	a, err := nd.New(p0.dtype(), shape...)
	if err != nil {
		return Image{}, err
	}
	if err := decodePages(s, pages, a.Data); err != nil {
		return Image{}, err
	}
	return Image{Array: a, Channels: p0.channels()}, nil
}

// decodePages decodes every chunk (strip or tile) of the pages into dst on
// all cores: chunks are compressed independently and land on disjoint
// samples, so Deflate, LZW and PackBits files decode in parallel. Every
// chunk is decoded; the error reported is the first in file order, so a
// corrupt file names the same chunk however the work was spread.
func decodePages(s *source, pages []*page, dst any) error {
	type chunk struct {
		p        *page
		index, k int
	}
	var chunks []chunk
	for i, p := range pages {
		for k := range p.offsets {
			chunks = append(chunks, chunk{p, i, k})
		}
	}
	errs := make([]error, len(chunks))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(chunks)))
	bufs := make([]chunkBuffers, workers) // each worker's own
	// A decoder's panic (a bug a crafted file found) comes back as an
	// error: on a worker it would end the process.
	err := nd.ForEach(workers, len(chunks), nil, func(w, j int) {
		c := chunks[j]
		errs[j] = c.p.decodeChunk(s, dst, c.index, c.k, &bufs[w])
	})
	if err != nil {
		return err
	}
	if err := firstError(errs); err != nil {
		return err
	}
	for i, p := range pages {
		if p.photometric == photometricMinIsWhite {
			pixels := p.width * p.height
			invertFirstChannel(dst, i*pixels, pixels, max(p.channels(), 1), 1<<(8*p.sample.size)-1)
		}
	}
	return nil
}

// firstError is the first non-nil error of errs, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func shapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, n := range shape {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, "×")
}

// chunkBuffers are reused from chunk to chunk: the compressed bytes, the
// decoded bytes, scratch space for the floating-point predictor, and the
// decoders.
type chunkBuffers struct {
	raw, decoded, scratch []byte
	src                   bytes.Reader
	zr                    io.ReadCloser // a klauspost zlib reader, once needed
	lzw                   *lzwDecoder
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// decodeChunk decodes chunk k of the page into page index of dst, an
// array's data, through buf's reusable buffers.
func (p *page) decodeChunk(s *source, dst any, index, k int, buf *chunkBuffers) error {
	name := fmt.Sprintf("IFD %d: %s %d", p.ifd, p.chunkName(), k)
	n := p.chunkBytes(k)
	var err error
	if p.compression == compressionNone {
		// readLayout checked that the chunk holds at least n bytes.
		buf.decoded, err = s.readAt(buf.decoded, p.offsets[k], uint64(n), name)
	} else {
		if buf.raw, err = s.readAt(buf.raw, p.offsets[k], p.counts[k], name); err == nil {
			buf.decoded = grow(buf.decoded, n)
			err = p.decompress(buf.decoded, buf.raw, name, buf)
		}
	}
	if err != nil {
		return err
	}
	p.undoPredictor(buf, k, s.order)
	return p.place(dst, index, k, buf.decoded, s.order)
}

// decompress fills dst, whose length is the decoded size of the chunk,
// from the compressed bytes src, with buf's reusable decoders.
func (p *page) decompress(dst, src []byte, name string, buf *chunkBuffers) error {
	switch p.compression {
	case compressionPackBits:
		return unpackBits(dst, src, name)
	case compressionLZW:
		if len(src) >= 2 && src[0] == 0 && src[1]&1 != 0 {
			return &UnsupportedError{What: "compression", Value: "old-style LZW", Code: "5", Detail: name + " starts with a least-significant-bit-first code"}
		}
		if buf.lzw == nil {
			buf.lzw = new(lzwDecoder)
		}
		// Only the decoded size is read: bytes after it (padding some
		// writers leave, or a missing end code) do not matter.
		if got, err := buf.lzw.decode(dst, src); err != nil {
			return &FormatError{Msg: fmt.Sprintf("%s: LZW data end after %d of %d bytes", name, got, len(dst)), Err: err}
		}
		return nil
	}
	// Deflate, through klauspost/compress's inflater (about twice as fast
	// as compress/flate's), reset for each chunk.
	buf.src.Reset(src)
	var err error
	if buf.zr == nil {
		buf.zr, err = zlib.NewReader(&buf.src)
	} else {
		err = buf.zr.(zlib.Resetter).Reset(&buf.src, nil)
	}
	if err != nil {
		return &FormatError{Msg: name + ": Deflate header", Err: err}
	}
	if got, err := io.ReadFull(buf.zr, dst); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return &FormatError{Msg: fmt.Sprintf("%s: %s data end after %d of %d bytes", name, compressionNames[p.compression], got, len(dst)), Err: err}
	}
	return nil
}

// unpackBits decodes PackBits (Apple's run-length code, TIFF section 9)
// from src until dst is full.
func unpackBits(dst, src []byte, name string) error {
	out := 0
	for i := 0; out < len(dst) && i < len(src); {
		n := int(int8(src[i]))
		i++
		switch {
		case n >= 0: // n+1 literal bytes
			if i+n+1 > len(src) {
				return &FormatError{Msg: name + ": PackBits literal run beyond the data", Err: io.ErrUnexpectedEOF}
			}
			out += copy(dst[out:], src[i:i+n+1])
			i += n + 1
		case n != -128: // the next byte 1−n times
			if i >= len(src) {
				return &FormatError{Msg: name + ": PackBits repeat run beyond the data", Err: io.ErrUnexpectedEOF}
			}
			for end := min(out+1-n, len(dst)); out < end; out++ {
				dst[out] = src[i]
			}
			i++
		}
	}
	if out < len(dst) {
		return &FormatError{Msg: fmt.Sprintf("%s: PackBits data end after %d of %d bytes", name, out, len(dst)), Err: io.ErrUnexpectedEOF}
	}
	return nil
}

// undoPredictor reverses the predictor on each row of decoded chunk k.
func (p *page) undoPredictor(buf *chunkBuffers, k int, order binary.ByteOrder) {
	if p.predictor == predictorNone {
		return
	}
	stride := p.spp
	if p.planar == planarSeparate {
		stride = 1
	}
	rowBytes := p.chunkWidth * p.pixelBytes()
	if p.predictor == predictorFloat {
		buf.scratch = grow(buf.scratch, rowBytes)
	}
	for r := range p.chunkRows(k) {
		row := buf.decoded[r*rowBytes : (r+1)*rowBytes]
		if p.predictor == predictorFloat {
			floatPredictor(row, buf.scratch, p.sample.size, stride, order, false)
		} else {
			horizontal(row, p.sample.size, stride, order, false)
		}
	}
}

// place copies the pixels of decoded chunk k that lie inside the image
// (tiles are cropped at the right and bottom edges) into page index of
// dst.
func (p *page) place(dst any, index, k int, chunk []byte, order binary.ByteOrder) error {
	plane, x0, y0 := p.chunkPosition(k)
	cols := min(p.chunkWidth, p.width-x0)
	rows := min(p.chunkRows(k), p.height-y0)
	channels := max(p.channels(), 1)
	stride := 1
	if p.planar == planarSeparate {
		stride = channels
	}
	rowBytes := p.chunkWidth * p.pixelBytes()
	for r := range rows {
		src := chunk[r*rowBytes : r*rowBytes+cols*p.pixelBytes()]
		base := ((index*p.height+y0+r)*p.width+x0)*channels + plane
		if p.photometric == photometricPalette {
			storePalette(dst.([]uint16), base, src, p.sample.size, order, p.colormap)
			continue
		}
		storeSamples(dst, base, stride, src, order)

	}
	return nil
}
