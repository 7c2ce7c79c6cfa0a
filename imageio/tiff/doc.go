// Package tiff reads and writes TIFF files as ndconv arrays: every page of
// a file as one stack, with 8 to 64-bit integer and 16 to 64-bit float
// samples, which golang.org/x/image/tiff (one page, 8 and 16 bits) cannot.
// It owns the TIFF container (classic TIFF in either byte order, and
// BigTIFF for reading), its strip and tile layouts, its codecs (None, LZW,
// Deflate and, for reading, PackBits), its predictors, and the mapping of
// TIFF sample types to nd dtypes.
//
// # Reading
//
// Read and ReadFile decode every full-resolution page; reduced-resolution
// images (NewSubfileType bit 0, or SubfileType 2: thumbnails, pyramid
// levels) are skipped, and SubIFDs are not followed. One page is an H×W
// array, or H×W×C with C samples per pixel; several pages are P×H×W or
// P×H×W×C, and must agree in size, channels and dtype (else an
// *UnsupportedError names the IFD that differs). Image.Channels gives C,
// or 0 when there is no channel axis.
//
// Photometric interpretations: MinIsBlack (1 to 4 samples: gray, gray with
// alpha, and 3 or 4 samples of other meaning are returned as they are),
// RGB (3 samples, or 4 with an alpha or other extra sample), Palette (8 or
// 16-bit indices, expanded through the ColorMap to 3 channels of uint16),
// and MinIsWhite for unsigned integers up to 32 bits, whose first sample
// is inverted (max − value) so that 0 is black as for MinIsBlack. Alpha is
// returned as stored: associated (premultiplied) alpha stays so.
// MinIsWhite with signed or float samples, YCbCr, CMYK, CIELab and other
// interpretations, more than 4 samples per pixel, bilevel and other bit
// depths, complex samples, FillOrder 2, JPEG and other compressions are
// refused with an *UnsupportedError that names the value.
//
// Samples map to the dtype of the same name, so that every value is kept
// exactly:
//
//	TIFF sample                  nd dtype
//	uint8 … uint64               Uint8 … Uint64
//	int8 … int64                 Int8 … Int64
//	float16, float32, float64    Float16, Float32, Float64
//	palette index (8, 16 bits)   Uint16 (the colour map's values)
//
// Strips and tiles (cropped at the right and bottom edges), planar
// configurations 1 (samples of a pixel together) and 2 (one plane per
// sample), compressions None (1), LZW (5; not the old LSB-first variant),
// Deflate (8 and 32946) and PackBits (32773), and predictors 1, 2
// (horizontal differencing of integers of any size, per sample, modulo
// their width) and 3 (the floating-point predictor of TIFF Technical Note
// 3, as libtiff writes it: bytes regrouped most significant first in
// either file byte order) are read. Strips and tiles are compressed
// independently, so they are decoded on all cores: Deflate with
// github.com/klauspost/compress's inflater, LZW with a decoder of this
// package that expands each code with one copy from what it has decoded
// already (checked against golang.org/x/image/tiff/lzw).
//
// Read trusts no header. Offsets and counts are checked against the file
// size, products of sizes against overflow and nd.MaxElements, and what
// compressed data claim to decode to against what they can hold (at most
// 4096 bytes per compressed byte, per chunk and per file), all before
// anything is allocated for them; IFD chains that loop, or IFDs that share
// bytes to make a small file costly, are refused. Bad input is a
// *FormatError, never a panic.
//
// # Writing
//
// Write stores an Image as a little-endian classic TIFF, one page per
// H×W(×C) slice, in strips of about 64 KiB: Channels 0 as MinIsBlack, 2
// as MinIsBlack with an unassociated alpha sample, 3 as RGB, 4 as RGB with
// unassociated alpha; uint8 and uint16 as unsigned, int16 and int32 as
// signed integers, float32 and float64 as IEEE floats; a resolution of 1
// pixel per unit with no absolute unit. Options choose None, Deflate or
// LZW compression (TIFF's LZW, with its early change of code width, which
// compress/lzw does not write) and the predictor that suits the dtype.
// Strips are encoded on all cores and are the same bytes on any number of
// them; Deflate strips are coded by klauspost/compress at level 5 and with
// Huffman codes alone, the smaller kept (on photographs the latter, smaller
// than libtiff's default level 6). The files are checked to read back in
// libtiff and tifffile (see testdata/make_tiff.py), and OpenCV and PIL
// (bench/peers/codecs_cv2.py); files OpenCV and PIL write are read in
// TestReadPeerFiles (testdata/make_peers.py).
package tiff
