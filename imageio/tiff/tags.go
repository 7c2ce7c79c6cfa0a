package tiff

import "strconv"

// Tags this package reads or writes (TIFF 6.0, section 8 and appendix A;
// the BigTIFF design note for the 64-bit field types).
const (
	tagNewSubfileType  = 254
	tagSubfileType     = 255
	tagImageWidth      = 256
	tagImageLength     = 257
	tagBitsPerSample   = 258
	tagCompression     = 259
	tagPhotometric     = 262
	tagFillOrder       = 266
	tagStripOffsets    = 273
	tagSamplesPerPixel = 277
	tagRowsPerStrip    = 278
	tagStripByteCounts = 279
	tagXResolution     = 282
	tagYResolution     = 283
	tagPlanarConfig    = 284
	tagResolutionUnit  = 296
	tagPredictor       = 317
	tagColorMap        = 320
	tagTileWidth       = 322
	tagTileLength      = 323
	tagTileOffsets     = 324
	tagTileByteCounts  = 325
	tagExtraSamples    = 338
	tagSampleFormat    = 339
)

// Field types.
const (
	typeByte     = 1
	typeASCII    = 2
	typeShort    = 3
	typeLong     = 4
	typeRational = 5
	typeUndef    = 7
	typeIFD      = 13
	typeLong8    = 16 // BigTIFF
	typeIFD8     = 18 // BigTIFF
)

// Compression schemes (tag 259).
const (
	compressionNone         = 1
	compressionLZW          = 5
	compressionDeflate      = 8
	compressionPackBits     = 32773
	compressionDeflateAdobe = 32946 // the same zlib stream under its older, unofficial number
)

// Photometric interpretations (tag 262).
const (
	photometricMinIsWhite = 0
	photometricMinIsBlack = 1
	photometricRGB        = 2
	photometricPalette    = 3
)

// Sample formats (tag 339).
const (
	sampleFormatUint  = 1
	sampleFormatInt   = 2
	sampleFormatFloat = 3
	sampleFormatVoid  = 4 // "undefined": read as unsigned
)

// Predictors (tag 317).
const (
	predictorNone       = 1
	predictorHorizontal = 2
	predictorFloat      = 3
)

const (
	planarContig   = 1 // the samples of a pixel side by side
	planarSeparate = 2 // one plane of chunks per sample
	extraUnassoc   = 2 // ExtraSamples: unassociated alpha
	resUnitNone    = 1 // ResolutionUnit: no absolute unit
)

// Names of the values that UnsupportedError reports, as TIFF and libtiff
// name them.
var (
	compressionNames = map[uint64]string{
		1: "None", 2: "CCITT RLE", 3: "CCITT Group 3", 4: "CCITT Group 4", 5: "LZW",
		6: "old-style JPEG", 7: "JPEG", 8: "Deflate", 32773: "PackBits", 32946: "Deflate",
		32809: "ThunderScan", 34661: "JBIG", 34676: "SGILOG", 34677: "SGILOG24",
		34712: "JPEG 2000", 34887: "LERC", 34925: "LZMA", 50000: "Zstandard", 50001: "WebP",
		50002: "JPEG XL",
	}
	photometricNames = map[uint64]string{
		0: "MinIsWhite", 1: "MinIsBlack", 2: "RGB", 3: "Palette", 4: "TransparencyMask",
		5: "Separated (CMYK)", 6: "YCbCr", 8: "CIELab", 9: "ICCLab", 10: "ITULab",
		32803: "CFA", 32844: "LogL", 32845: "LogLuv", 34892: "LinearRaw",
	}
	sampleFormatNames = map[uint64]string{
		1: "unsigned integer", 2: "signed integer", 3: "IEEE floating point", 4: "undefined",
		5: "complex integer", 6: "complex IEEE floating point",
	}
	predictorNames = map[uint64]string{1: "none", 2: "horizontal differencing", 3: "floating point"}
)

// unsupported makes the UnsupportedError for a value of an enumerated tag,
// naming it where names knows it.
func unsupported(what string, names map[uint64]string, v uint64, detail string) error {
	code := strconv.FormatUint(v, 10)
	if name, ok := names[v]; ok {
		return &UnsupportedError{What: what, Value: name, Code: code, Detail: detail}
	}
	return &UnsupportedError{What: what, Value: code, Detail: detail}
}
