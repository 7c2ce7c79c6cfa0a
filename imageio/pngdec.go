package imageio

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/zlib"

	"github.com/ndconv/ndconv/imageio/internal/predict"
	"github.com/ndconv/ndconv/nd"
)

// decodePNGFast decodes the PNGs most files are — not interlaced, 8- or
// 16-bit gray, gray and alpha, RGB or RGBA, no palette and no transparent
// colour — straight into their array: the image data inflated by
// klauspost/compress and the rows unfiltered in place, with no image.Image
// between (image/png then FromImage took 0.4 s on a 2048² RGB file, most
// of it in the conversions). It returns false for anything else, and for
// any doubt about the stream (a bad checksum, a short or long image), so
// that image/png decodes it and says what is wrong in its words. data is
// the whole file, signature to IEND (readPNGChunks).
func decodePNGFast(data []byte) (nd.Array, bool) {
	ihdr := data[16:29]
	width, height := int(binary.BigEndian.Uint32(ihdr[0:])), int(binary.BigEndian.Uint32(ihdr[4:]))
	depth, colorType, interlace := int(ihdr[8]), int(ihdr[9]), ihdr[12]
	if interlace != 0 || (depth != 8 && depth != 16) || ihdr[10] != 0 || ihdr[11] != 0 || width <= 0 || height <= 0 {
		return nd.Array{}, false
	}
	var samples int
	switch colorType {
	case pngGray, pngGrayAlpha, pngRGB, pngRGBA:
		samples = pngSamples[colorType]
	default:
		return nd.Array{}, false
	}
	// The chunks: CRCs checked, IDAT gathered, tRNS (a transparent
	// colour, which adds an alpha channel) left to image/png.
	var idat [][]byte
	for off := 8; off+12 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[off:]))
		if off+12+n > len(data) {
			return nd.Array{}, false
		}
		typ, body := string(data[off+4:off+8]), data[off+8:off+8+n]
		if crc32.ChecksumIEEE(data[off+4:off+8+n]) != binary.BigEndian.Uint32(data[off+8+n:]) {
			return nd.Array{}, false
		}
		switch typ {
		case "tRNS", "PLTE":
			return nd.Array{}, false
		case "IDAT":
			idat = append(idat, body)
		}
		off += 12 + n
	}
	if len(idat) == 0 {
		return nd.Array{}, false
	}
	// One slice behind a bytes.Reader: klauspost's inflater reads an
	// io.ByteReader directly, any other reader through a bufio.Reader,
	// byte by byte (its huffmanBufioReader was 56% of a 512² file's
	// decoding: BenchmarkDecodePNGSmall).
	stream := idat[0]
	if len(idat) > 1 {
		stream = bytes.Join(idat, nil)
	}
	zr, err := zlib.NewReader(bytes.NewReader(stream))
	if err != nil {
		return nd.Array{}, false
	}
	defer zr.Close()
	bpp := samples * depth / 8 // bytes per pixel, what the filters step by
	stride := width * bpp
	rows := make([]byte, height*(stride+1))
	if _, err := io.ReadFull(zr, rows); err != nil {
		return nd.Array{}, false
	}
	// Nothing may follow the image but the stream's end (and its
	// checksum, which reading to EOF verifies).
	if n, err := zr.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return nd.Array{}, false
	}
	pix := make([]byte, height*stride)
	var prev []byte
	for y := range height {
		row := rows[y*(stride+1):][:stride+1]
		cur := pix[y*stride:][:stride]
		copy(cur, row[1:])
		if !unfilter(row[0], cur, prev, bpp) {
			return nd.Array{}, false
		}
		prev = cur
	}
	shape := []int{height, width, samples}
	if samples == 1 {
		shape = shape[:2]
	}
	if depth == 8 {
		return nd.Array{Shape: shape, Data: pix}, true
	}
	v := make([]uint16, len(pix)/2)
	for i := range v {
		v[i] = binary.BigEndian.Uint16(pix[2*i:])
	}
	return nd.Array{Shape: shape, Data: v}, true
}

// unfilter undoes a row's filter in place (PNG specification §9.2), prev
// being the row above unfiltered (nil for the first, which the filters
// see as zeros).
func unfilter(filter byte, cur, prev []byte, bpp int) bool {
	if prev == nil && filter >= 2 {
		// Up adds nothing, Average half the left byte, Paeth the left
		// byte (the Paeth of a, 0 and 0 is a).
		switch filter {
		case 2:
			return true
		case 3:
			for i := bpp; i < len(cur); i++ {
				cur[i] += cur[i-bpp] / 2
			}
			return true
		case 4:
			filter = 1
		}
	}
	switch filter {
	case 0: // None
	case 1: // Sub
		predict.UndoDifferences(cur, bpp)
	case 2: // Up
		unfilterUp(cur, prev)
	case 3: // Average
		for i := range bpp {
			cur[i] += prev[i] / 2
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += byte((int(cur[i-bpp]) + int(prev[i])) / 2)
		}
	case 4: // Paeth
		for i := range bpp {
			cur[i] += prev[i] // the Paeth of 0, b and 0 is b
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += paeth(cur[i-bpp], prev[i], prev[i-bpp])
		}
	default:
		return false
	}
	return true
}

// unfilterUp adds the row above, eight bytes at a time with carries kept
// inside each byte (SWAR).
func unfilterUp(cur, prev []byte) {
	prev = prev[:len(cur)]
	const low7, high = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	for len(cur) >= 8 {
		a, b := binary.LittleEndian.Uint64(cur), binary.LittleEndian.Uint64(prev)
		binary.LittleEndian.PutUint64(cur, (a&low7)+(b&low7)^(a^b)&high)
		cur, prev = cur[8:], prev[8:]
	}
	for i := range cur {
		cur[i] += prev[i]
	}
}
