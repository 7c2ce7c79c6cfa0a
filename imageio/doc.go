// Package imageio reads and writes ndconv's arrays (nd.Array) in file formats:
// ReadFile and WriteFile choose the format by extension and carry what a
// file says beyond the samples (Meta: colour channels, a NIfTI header) from
// input to output. It holds the NumPy .npy format, written by hand (ReadNPY,
// WriteNPY); PNG (ReadPNG, WritePNG, WritePNGLevel: every colour type at 8
// and 16 bits, read with image/png, written by our own encoder with
// OpenCV's defaults, rows deflated in parallel with klauspost/compress);
// JPEG (ReadJPEG, WriteJPEG) with the subpackage jpeg, our codec with
// libjpeg-turbo's (OpenCV's) samples and bytes, image/jpeg reading what it
// does not; headerless .raw files (ReadRawFile); tables of numbers
// for kernels (ReadText); and the conversion between image.Image values and
// arrays (FromImage, ToImage). The TIFF and NIfTI-1 codecs, which no
// reachable library provides, are the subpackages tiff and nifti.
//
// # Conventions
//
// Arrays are C-order with the slowest axis first; an image is H×W (one
// sample per pixel) or H×W×C (C samples per pixel, the channel axis last).
// Samples are stored as the file or image type holds them: nothing is
// rescaled, and premultiplied images stay premultiplied.
//
// Readers never trust a header: lengths, shapes and element counts are
// checked, and limited by nd.MaxElements, before anything large is
// allocated, and a stream that ends early fails with a *FormatError without
// the claimed size ever being allocated. Every reader checks its signature
// and header before reading further and reads the rest only up to what the
// header announces (PNG up to IEND, JPEG within its frame's size, NIfTI and
// .npy their voxels, .raw its shape), so that a stream or a device named
// as a file (a FIFO, /dev/zero) is refused after its first bytes or read
// within a bound; a TIFF, read at offsets, is read from a stream only up
// to 1 GiB. Data mapped rather than read
// (MapFile) and outputs written a piece at a time (WriteFileChunks) are
// bounded by nd.MaxShapeElements instead: volumes larger than memory
// stream. Writers that take a path write to
// a temporary file in the same directory and rename it over the target, so
// a failed write leaves nothing behind.
//
// # Errors
//
// Bad input is reported, never panicked: a *FormatError for a file that is
// not a valid file of its format (truncated, malformed header), an
// *UnsupportedError for a valid file or value that ndconv cannot represent
// (a bool or complex256 dtype, complex data in a format of real samples,
// an image shape with five channels). Errors of
// the underlying reader or writer are wrapped and can be found with
// errors.Is and errors.As.
package imageio
