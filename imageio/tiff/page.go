package tiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// Bounds on what compressed chunk data can hold: no TIFF codec expands a
// byte into more than about 2,600 (LZW's best case; Deflate's is 1,032,
// PackBits' 64), so a chunk that claims more than maxExpansion decoded
// bytes per compressed byte, plus chunkSlack, is refused before anything is
// allocated for it, and so is a file whose pages together claim more than
// maxExpansion times its size plus fileSlack.
const (
	maxExpansion = 4096
	chunkSlack   = 256
	fileSlack    = 1 << 16

	// maxDimension bounds ImageWidth, ImageLength and the tile size
	// (a BigTIFF may give them as 64-bit values).
	maxDimension = 1<<32 - 1
)

// sampleType is the type of one stored sample.
type sampleType struct {
	format uint64 // sampleFormatUint, sampleFormatInt or sampleFormatFloat
	size   int    // bytes: 1, 2, 4 or 8
}

// dtype is the nd.DType of t's values: the type of the same name.
func (t sampleType) dtype() nd.DType {
	byFormat := map[uint64]map[int]nd.DType{
		sampleFormatUint:  {1: nd.Uint8, 2: nd.Uint16, 4: nd.Uint32, 8: nd.Uint64},
		sampleFormatInt:   {1: nd.Int8, 2: nd.Int16, 4: nd.Int32, 8: nd.Int64},
		sampleFormatFloat: {2: nd.Float16, 4: nd.Float32, 8: nd.Float64},
	}
	return byFormat[t.format][t.size]
}

func (t sampleType) String() string {
	switch t.format {
	case sampleFormatFloat:
		return fmt.Sprintf("float%d", 8*t.size)
	case sampleFormatInt:
		return fmt.Sprintf("int%d", 8*t.size)
	}
	return fmt.Sprintf("uint%d", 8*t.size)
}

// page is a validated full-resolution image of a file: everything needed
// to decode its samples, which are stored in chunks (strips or tiles) of
// chunkWidth × chunkHeight pixels, one set of chunks per sample plane
// when planar is planarSeparate.
type page struct {
	ifd           int // index in the IFD chain, for messages
	width, height int
	spp           int // samples per pixel
	sample        sampleType
	photometric   uint64
	compression   uint64
	predictor     uint64
	planar        uint64
	tiled         bool
	chunkWidth    int // the tile width, or the image width for strips
	chunkHeight   int // the tile length, or RowsPerStrip (at most the height)
	offsets       []uint64
	counts        []uint64
	colormap      []uint16 // Palette: the red, then green, then blue values of each index
}

// channels is the length of the channel axis of the decoded page, 0 when
// it has none.
func (p *page) channels() int {
	switch {
	case p.photometric == photometricPalette:
		return 3
	case p.spp == 1:
		return 0
	}
	return p.spp
}

func (p *page) dtype() nd.DType {
	if p.photometric == photometricPalette {
		return nd.Uint16
	}
	return p.sample.dtype()
}

// describe says what a page decodes to, for the message about pages that
// differ.
func (p *page) describe() string {
	s := fmt.Sprintf("%d×%d %v", p.height, p.width, p.dtype())
	if c := p.channels(); c != 0 {
		s += fmt.Sprintf(" with %d channels", c)
	}
	return s
}

// chunkName is "strip" or "tile", for messages.
func (p *page) chunkName() string {
	if p.tiled {
		return "tile"
	}
	return "strip"
}

// pixelBytes is the number of bytes one pixel takes in a chunk: all its
// samples, or one when each sample has its own plane.
func (p *page) pixelBytes() int {
	if p.planar == planarSeparate {
		return p.sample.size
	}
	return p.spp * p.sample.size
}

// grid returns the number of chunks across and down one sample plane.
func (p *page) grid() (across, down int) {
	return ceilDiv(p.width, p.chunkWidth), ceilDiv(p.height, p.chunkHeight)
}

// chunkPosition returns the sample plane and the top-left pixel of chunk k.
func (p *page) chunkPosition(k int) (plane, x0, y0 int) {
	across, down := p.grid()
	plane, k = k/(across*down), k%(across*down)
	return plane, (k % across) * p.chunkWidth, (k / across) * p.chunkHeight
}

// chunkRows is the number of rows chunk k holds: a tile always has all its
// rows, the last strip only those left in the image.
func (p *page) chunkRows(k int) int {
	if p.tiled {
		return p.chunkHeight
	}
	_, _, y0 := p.chunkPosition(k)
	return min(p.chunkHeight, p.height-y0)
}

// chunkBytes is the size of chunk k decoded.
func (p *page) chunkBytes(k int) int {
	return p.chunkRows(k) * p.chunkWidth * p.pixelBytes()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// mulBounded returns the product of factors, or false when it exceeds
// 1<<62 (so that sums of a few such products cannot overflow either).
func mulBounded(factors ...uint64) (uint64, bool) {
	const limit = 1 << 62
	p := uint64(1)
	for _, f := range factors {
		if f != 0 && p > limit/f {
			return 0, false
		}
		p *= f
	}
	return p, true
}

// parsePage validates IFD d and returns the page it describes, or nil for
// a reduced-resolution image (a thumbnail or pyramid level), which
// Read skips.
func parsePage(s *source, d ifd) (*page, error) {
	where := fmt.Sprintf("IFD %d", d.index)
	subfile, err := s.value(d, tagNewSubfileType, 0)
	if err != nil {
		return nil, err
	}
	oldSubfile, err := s.value(d, tagSubfileType, 1)
	if err != nil {
		return nil, err
	}
	if subfile&1 != 0 || oldSubfile == 2 {
		return nil, nil
	}

	p := &page{ifd: d.index}
	w, okW, err := s.uints(d, tagImageWidth, 1)
	if err != nil {
		return nil, err
	}
	h, okH, err := s.uints(d, tagImageLength, 1)
	if err != nil {
		return nil, err
	}
	if !okW || !okH {
		return nil, formatErrorf("%s lacks ImageWidth or ImageLength", where)
	}
	if w[0] == 0 || h[0] == 0 || w[0] > maxDimension || h[0] > maxDimension {
		return nil, formatErrorf("%s: image size %d×%d", where, h[0], w[0])
	}
	p.width, p.height = int(w[0]), int(h[0])

	spp, err := s.value(d, tagSamplesPerPixel, 1)
	if err != nil {
		return nil, err
	}
	switch {
	case spp == 0:
		return nil, formatErrorf("%s: SamplesPerPixel is 0", where)
	case spp > 4:
		return nil, &UnsupportedError{What: "samples per pixel", Value: strconv.FormatUint(spp, 10), Detail: "ndconv reads 1 to 4"}
	}
	p.spp = int(spp)

	bits, err := s.perSample(d, tagBitsPerSample, p.spp, 1, "BitsPerSample")
	if err != nil {
		return nil, err
	}
	format, err := s.perSample(d, tagSampleFormat, p.spp, sampleFormatUint, "SampleFormat")
	if err != nil {
		return nil, err
	}
	if p.sample, err = sampleTypeOf(format, bits); err != nil {
		return nil, err
	}

	if p.compression, err = s.value(d, tagCompression, compressionNone); err != nil {
		return nil, err
	}
	switch p.compression {
	case compressionNone, compressionLZW, compressionDeflate, compressionDeflateAdobe, compressionPackBits:
	default:
		return nil, unsupported("compression", compressionNames, p.compression, "ndconv reads None, LZW, Deflate and PackBits")
	}
	if fill, err := s.value(d, tagFillOrder, 1); err != nil {
		return nil, err
	} else if fill != 1 {
		return nil, &UnsupportedError{What: "FillOrder", Value: strconv.FormatUint(fill, 10), Detail: "ndconv reads bits most significant first (1) only"}
	}

	if p.planar, err = s.value(d, tagPlanarConfig, planarContig); err != nil {
		return nil, err
	}
	if p.planar != planarContig && p.planar != planarSeparate {
		return nil, formatErrorf("%s: PlanarConfiguration %d", where, p.planar)
	}
	if p.spp == 1 {
		p.planar = planarContig // the same layout; one rule less below
	}

	if p.predictor, err = s.value(d, tagPredictor, predictorNone); err != nil {
		return nil, err
	}
	switch {
	case p.predictor == predictorNone:
	case p.predictor == predictorHorizontal && p.sample.format != sampleFormatFloat:
	case p.predictor == predictorFloat && p.sample.format == sampleFormatFloat:
	case p.predictor == predictorHorizontal || p.predictor == predictorFloat:
		return nil, unsupported("predictor", predictorNames, p.predictor, "for "+p.sample.String()+" samples")
	default:
		return nil, unsupported("predictor", predictorNames, p.predictor, "")
	}

	if err := p.readPhotometric(s, d); err != nil {
		return nil, err
	}
	if err := p.readLayout(s, d); err != nil {
		return nil, err
	}
	return p, nil
}

// perSample reads a tag that has one value per sample, or one value for
// all, and returns that value; samples with different values are
// unsupported.
func (s *source) perSample(d ifd, tag uint16, spp int, def uint64, name string) (uint64, error) {
	v, ok, err := s.uints(d, tag, uint64(spp))
	if err != nil || !ok {
		return def, err
	}
	for _, x := range v[1:] {
		if x != v[0] {
			vs := make([]string, len(v))
			for i, x := range v {
				vs[i] = strconv.FormatUint(x, 10)
			}
			return 0, &UnsupportedError{What: name, Value: strings.Join(vs, ","), Detail: "samples of one pixel of different types"}
		}
	}
	return v[0], nil
}

// sampleTypeOf checks a SampleFormat and BitsPerSample pair.
func sampleTypeOf(format, bits uint64) (sampleType, error) {
	if format == sampleFormatVoid {
		format = sampleFormatUint
	}
	switch format {
	case sampleFormatUint, sampleFormatInt, sampleFormatFloat:
	default:
		return sampleType{}, unsupported("sample format", sampleFormatNames, format, "")
	}
	ok := bits == 8 || bits == 16 || bits == 32 || bits == 64
	if format == sampleFormatFloat && bits == 8 {
		ok = false
	}
	if !ok {
		detail := "ndconv reads 8, 16, 32 and 64-bit integers and 16, 32 and 64-bit floats"
		if bits == 1 {
			detail = "bilevel images are not supported; " + detail
		}
		return sampleType{}, &UnsupportedError{What: "BitsPerSample", Value: strconv.FormatUint(bits, 10), Detail: detail + " (" + sampleFormatNames[format] + " samples)"}
	}
	return sampleType{format: format, size: int(bits / 8)}, nil
}

// readPhotometric reads and checks the photometric interpretation, and
// the colour map of a palette image.
func (p *page) readPhotometric(s *source, d ifd) error {
	def := uint64(photometricMinIsBlack)
	if p.spp >= 3 {
		def = photometricRGB
	}
	var err error
	if p.photometric, err = s.value(d, tagPhotometric, def); err != nil {
		return err
	}
	switch p.photometric {
	case photometricMinIsBlack:
	case photometricMinIsWhite:
		if p.sample.format != sampleFormatUint || p.sample.size > 4 {
			return &UnsupportedError{What: "photometric interpretation", Value: "MinIsWhite", Code: "0",
				Detail: "with " + p.sample.String() + " samples: only unsigned integers up to 32 bits are inverted"}
		}
	case photometricRGB:
		if p.spp < 3 {
			return formatErrorf("IFD %d: RGB with %d samples per pixel", p.ifd, p.spp)
		}
	case photometricPalette:
		if p.spp != 1 || p.sample.format != sampleFormatUint || p.sample.size > 2 {
			return &UnsupportedError{What: "photometric interpretation", Value: "Palette", Code: "3",
				Detail: fmt.Sprintf("with %d samples per pixel of %v: ndconv reads 8 and 16-bit indices", p.spp, p.sample)}
		}
		n := uint64(3) << (8 * p.sample.size)
		cmap, ok, err := s.uints(d, tagColorMap, n)
		if err != nil {
			return err
		}
		if !ok || uint64(len(cmap)) != n {
			return formatErrorf("IFD %d: a palette image of %v indices needs a ColorMap of %d values", p.ifd, p.sample, n)
		}
		p.colormap = make([]uint16, n)
		for i, v := range cmap {
			p.colormap[i] = uint16(v)
		}
	default:
		return unsupported("photometric interpretation", photometricNames, p.photometric, "ndconv reads MinIsBlack, MinIsWhite, RGB and Palette")
	}
	return nil
}

// readLayout reads the strip or tile layout and checks every chunk's
// position and size against the file before anything is decoded.
func (p *page) readLayout(s *source, d ifd) error {
	offsetsTag, countsTag := uint16(tagStripOffsets), uint16(tagStripByteCounts)
	if _, p.tiled = d.fields[tagTileWidth]; p.tiled {
		offsetsTag, countsTag = tagTileOffsets, tagTileByteCounts
		tw, err := s.value(d, tagTileWidth, 0)
		if err != nil {
			return err
		}
		tl, err := s.value(d, tagTileLength, 0)
		if err != nil {
			return err
		}
		if tw == 0 || tl == 0 || tw > maxDimension || tl > maxDimension {
			return formatErrorf("IFD %d: tile size %d×%d", p.ifd, tl, tw)
		}
		p.chunkWidth, p.chunkHeight = int(tw), int(tl)
	} else {
		rps, err := s.value(d, tagRowsPerStrip, maxDimension)
		if err != nil {
			return err
		}
		if rps == 0 {
			return formatErrorf("IFD %d: RowsPerStrip is 0", p.ifd)
		}
		p.chunkWidth, p.chunkHeight = p.width, int(min(rps, uint64(p.height)))
	}
	// The decoded size of the largest chunk, checked before the chunk
	// count is multiplied out so that no product below can overflow.
	if _, ok := mulBounded(uint64(p.chunkWidth), uint64(p.chunkHeight), uint64(p.pixelBytes())); !ok {
		return formatErrorf("IFD %d: %s size %d×%d is too large", p.ifd, p.chunkName(), p.chunkHeight, p.chunkWidth)
	}
	across, down := p.grid()
	planes := 1
	if p.planar == planarSeparate {
		planes = p.spp
	}
	n, ok := mulBounded(uint64(across), uint64(down), uint64(planes))
	if !ok || n > uint64(s.size)/2 {
		return formatErrorf("IFD %d: %d %ss cannot be listed in a %d-byte file", p.ifd, n, p.chunkName(), s.size)
	}
	var err error
	var okOffsets, okCounts bool
	if p.offsets, okOffsets, err = s.uints(d, offsetsTag, n); err != nil {
		return err
	}
	if p.counts, okCounts, err = s.uints(d, countsTag, n); err != nil {
		return err
	}
	if !okOffsets || !okCounts {
		return formatErrorf("IFD %d lacks %s offsets or byte counts", p.ifd, p.chunkName())
	}
	if uint64(len(p.offsets)) != n || uint64(len(p.counts)) != n {
		return formatErrorf("IFD %d: %d %s offsets and %d byte counts for %d %ss", p.ifd, len(p.offsets), p.chunkName(), len(p.counts), n, p.chunkName())
	}
	for k := range p.offsets {
		off, count, decoded := p.offsets[k], p.counts[k], uint64(p.chunkBytes(k))
		name := fmt.Sprintf("IFD %d: %s %d", p.ifd, p.chunkName(), k)
		switch {
		case count == 0:
			return formatErrorf("%s is empty", name)
		case off > uint64(s.size) || count > uint64(s.size)-off:
			return formatErrorf("%s (%d bytes at offset %d) lies beyond the end of the %d-byte file", name, count, off, s.size)
		case p.compression == compressionNone && count < decoded:
			return formatErrorf("%s has %d bytes; %d rows of %d pixels need %d", name, count, p.chunkRows(k), p.chunkWidth, decoded)
		case count < 1<<50 && decoded > maxExpansion*count+chunkSlack: // (a larger count cannot be exceeded)
			return formatErrorf("%s claims %d decoded bytes from %d compressed bytes", name, decoded, count)
		}
	}
	return nil
}

// decodedBytes is the sum of the decoded sizes of the page's chunks, or
// 1<<62 if that is less.
func (p *page) decodedBytes() uint64 {
	var sum uint64
	for k := range p.offsets {
		sum = addBounded(sum, uint64(p.chunkBytes(k)))
	}
	return sum
}

// addBounded returns a + b, or 1<<62 if that is less; a and b must be at
// most 1<<62 (as mulBounded's results are), so that nothing overflows.
func addBounded(a, b uint64) uint64 { return min(a+b, 1<<62) }
