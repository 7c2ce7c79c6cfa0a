// Package jpeg is ndconv's JPEG codec: a decoder and an encoder of
// baseline Huffman-coded 8-bit JPEG that give, bit for bit, what
// libjpeg-turbo gives with its defaults (and so what OpenCV's
// cv2.imdecode and cv2.imencode give), on all cores.
//
// # What it decodes
//
// Decode takes baseline (SOF0) and extended sequential (SOF1) Huffman
// JPEGs of 8-bit precision with one component (gray) or three (YCbCr, or
// RGB where an Adobe APP14 marker says transform 0, or, without JFIF and
// Adobe markers, where the component ids are 'R', 'G', 'B', as libjpeg
// guesses), in one interleaved scan, with sampling factors of 1 or 2 in
// each direction (4:4:4, 4:2:2, 4:2:0, 4:4:0 and the like), restart
// intervals, any number of DQT and DHT tables (the standard Huffman tables
// stand in for a scan's undefined tables 0 and 1, as in libjpeg-turbo for
// motion-JPEG frames), APPn and COM segments skipped. The samples are
// libjpeg-turbo's default decompression: the accurate integer IDCT
// (jidctint.c, with its range-limit table, so that even corrupt
// coefficients give libjpeg's values), fancy upsampling (jdsample.c:
// h2v1, h2v2 and h1v2 triangle filters, with its edge rules and biases,
// and plain replication where libjpeg uses it: chroma 2 samples wide or
// less), and the YCbCr → RGB tables of jdcolor.c. Colour images come out
// as interleaved R, G, B.
//
// Everything else — progressive, lossless, hierarchical and
// arithmetic-coded files, 12-bit samples, 2 or 4 components (CMYK, YCCK),
// several scans, sampling factors of 3 or 4, a height given by DNL — is an
// *UnsupportedError: imageio.ReadJPEG then decodes the file with
// image/jpeg, as it did all files before. A damaged file is a
// *FormatError: one cut short (no marker after its scan) is "truncated
// file" and wraps io.ErrUnexpectedEOF; undefined tables, bad Huffman
// codes and entropy-coded data that ends early are errors (where libjpeg
// warns and fills in zeros). Decode refuses a header that claims more than
// MaxRatio samples per byte of data before allocating for it.
//
// # What it encodes
//
// Encode and AppendEncode write what libjpeg writes after
// jpeg_set_defaults and jpeg_set_quality(q, TRUE), as cv2.imencode does:
// SOI, a JFIF 1.01 APP0 (density 1:1, no unit), the Annex K quantization
// tables scaled by jpeg_quality_scaling (one DQT each), SOF0, the standard
// Huffman tables (one DHT each: DC and AC of luminance, then of
// chrominance), SOS, the data, EOI. RGB is converted with jccolor.c's
// tables and subsampled 4:2:0 by h2v2_downsample (biases 1, 2, …) unless
// Options.Sampling asks for 4:4:4, 4:2:2 (h2v1_downsample) or 4:4:0
// (int_downsample); edges are padded as libjpeg pads them (the last
// column and row repeated, then dummy blocks with the previous DC); the
// accurate integer FDCT (jfdctint.c) and libjpeg-turbo's reciprocal
// quantization (the same quotients as the C division with rounding). The
// bytes equal OpenCV 4.6's on libjpeg-turbo 2.1.5 for gray and RGB images
// of any size and quality (the tests compare them), and PIL's for 4:4:4
// and 4:2:2. No restart intervals, progressive or optimized Huffman
// tables are written.
//
// # Speed
//
// Decoding: table-driven Huffman decoding (a 9-bit lookahead table giving
// the symbol and code length, and for a coefficient whose code and extra
// bits fit, the run and the value), a 64-bit bit buffer refilled eight
// bytes at a time from a copy of the scan with its stuffed zeros removed
// (found with bytes.IndexByte), an IDCT without bounds checks that
// shortcuts DC-only blocks, and the 4:2:0 upsampling fused with the
// colour conversion. Without restart intervals one goroutine decodes MCU
// rows into a ring of coefficient buffers while the others transform,
// upsample and convert the rows it has finished (a row is converted once
// its neighbours, which the vertical filter reads, are transformed); with
// restart intervals the intervals are decoded in parallel, then the rows
// converted in parallel.
//
// Encoding: MCU rows are converted, downsampled, transformed, quantized
// and Huffman-coded on all cores, each into its own unstuffed bit string
// (a row's first DC difference waits for the previous row's last DC
// values); one pass then joins the rows' bits and stuffs a zero after each
// 0xFF, four bytes at a time where none is 0xFF. The bytes do not depend
// on the number of cores. The Huffman coder writes each code without a
// branch (the pending bits stored as eight bytes, the output advanced by
// the whole bytes among them); RGB → YCbCr multiplies two pixels at a
// time in the halves of a uint64.
//
// On amd64 with AVX2 the islow IDCT, the FDCT with quantization and the
// colour paths are assembly generated with avo (asm/, jpeg_amd64.s),
// computing exactly what their pure-Go twins compute: idctGo and
// fdctQuantGo in 32-bit lanes (the IDCT declines blocks whose dequantized
// coefficients reach 2^15, which only corrupt files have, and the twin
// transforms them); the fused 4:2:0 upsampling and YCbCr → RGB
// (yccH2V2Go), YCbCr → RGB (yccToRGBGo), h2v1 fancy upsampling
// (upH2V1Go), RGB → YCbCr (rgbToYCCGo) and h2v2 downsampling
// (downH2V2Go) in 16-bit lanes with the colour sums in 32-bit lanes of
// VPMADDWD, 32 pixels at a time, the row edges (and rows under 32
// pixels) left to the twins. The noasm build tag, other architectures and
// CPUs without AVX2 use the twins. The rest is pure Go.
// docs/perf/codecs.md has the figures beside OpenCV's.
//
// # Conventions
//
// An Image is Height rows of Width pixels of Channels interleaved 8-bit
// samples. The arithmetic of each step follows the C named in its doc
// comment; the tests hold straight ports of those C loops ("slow but
// simple" references, ref_test.go) and compare the fast code with them on
// random and extreme inputs, and compare whole files with OpenCV's
// (testdata/gen.py writes the fixtures; TestOpenCVLive runs cv2 when
// /usr/bin/python3 has it).
package jpeg
