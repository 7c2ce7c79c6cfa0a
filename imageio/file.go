package imageio

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
	"github.com/ndconv/ndconv/imageio/nifti"
	"github.com/ndconv/ndconv/imageio/tiff"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// RawOptions describe a headerless .raw file: its shape and element type
// (little-endian, C order).
type RawOptions struct {
	Shape []int
	DType nd.DType
}

// Meta is what a file says about its array beyond shape and dtype, kept
// from an input so that an output can be written like it.
type Meta struct {
	// Channels is the number of samples per pixel held in the last axis
	// (2 to 4: colour images only), or 0 when every axis is spatial.
	Channels int
	// NIfTI is a NIfTI input's header: a NIfTI output keeps its geometry
	// (voxel sizes, affine, units, description).
	NIfTI *nifti.Header
	// Zarr is a Zarr input's layout and OME-Zarr level: a Zarr output of
	// the same rank keeps its chunks, shards and codecs, and its level's
	// axes, scale and translation.
	Zarr *ZarrMeta
}

// WriteOptions are the choices a written file allows.
type WriteOptions struct {
	// Meta is the input's, for formats that carry it over.
	Meta Meta
	// JPEGQuality is 1 to 100, 0 meaning DefaultJPEGQuality.
	JPEGQuality int
	// PNGCompression is a .png's zlib level 1 to 9, 0 meaning
	// DefaultPNGCompression and PNGNoCompression level 0 (see WritePNGLevel).
	PNGCompression int
	// TIFF chooses a TIFF's compression and predictor.
	TIFF tiff.Options
	// BankFirst says that a filter bank's axis, where the output has one
	// more axis than the input, comes first (the planar bank layout): an
	// OME-Zarr output names it as its channel axis (OutputLevel).
	BankFirst bool
}

// pngLevel is the zlib level that PNGCompression asks for.
func (o WriteOptions) pngLevel() int {
	switch o.PNGCompression {
	case 0:
		return DefaultPNGCompression
	case PNGNoCompression:
		return 0
	}
	return o.PNGCompression
}

// A format reads and writes the files of some extensions.
type format struct {
	extensions []string
	// image is true for formats that hold only H×W or H×W×C images, with
	// C samples per pixel.
	image bool
	// complex is true for formats that hold complex64 and complex128.
	complex bool
	decode  func(r io.Reader) (nd.Array, Meta, error) // nil for .raw
	write   func(w io.Writer, a nd.Array, opt WriteOptions) error
	// readPath and writePath, for a format stored as a directory (Zarr),
	// replace decode and write.
	readPath  func(ctx context.Context, path string) (nd.Array, Meta, error)
	writePath func(ctx context.Context, path string, a nd.Array, opt WriteOptions) error
}

// formats is every format ReadFile and WriteFile know, by extension.
var formats = []format{
	{extensions: []string{".npy"}, complex: true,
		decode: func(r io.Reader) (nd.Array, Meta, error) { return noMeta(ReadNPY(r)) },
		write:  func(w io.Writer, a nd.Array, _ WriteOptions) error { return WriteNPY(w, a) }},
	{extensions: []string{".raw"}, complex: true,
		write: func(w io.Writer, a nd.Array, _ WriteOptions) error { return writeLittleEndian(w, a.Data) }},
	{extensions: []string{".png"}, image: true,
		decode: func(r io.Reader) (nd.Array, Meta, error) { return imageMeta(ReadPNG(r)) },
		write:  func(w io.Writer, a nd.Array, opt WriteOptions) error { return WritePNGLevel(w, a, opt.pngLevel()) }},
	{extensions: []string{".jpg", ".jpeg"}, image: true,
		decode: func(r io.Reader) (nd.Array, Meta, error) { return imageMeta(ReadJPEG(r)) },
		write:  func(w io.Writer, a nd.Array, opt WriteOptions) error { return WriteJPEG(w, a, opt.JPEGQuality) }},
	{extensions: []string{".tif", ".tiff"}, decode: decodeTIFF, write: writeTIFF},
	{extensions: []string{".nii"}, decode: decodeNIfTI,
		write: func(w io.Writer, a nd.Array, opt WriteOptions) error { return nifti.Write(w, a, opt.Meta.NIfTI) }},
	{extensions: []string{".nii.gz"}, decode: decodeNIfTI,
		write: func(w io.Writer, a nd.Array, opt WriteOptions) error {
			z := gzip.NewWriter(w)
			if err := nifti.Write(z, a, opt.Meta.NIfTI); err != nil {
				return err
			}
			return z.Close()
		}},
}

func noMeta(a nd.Array, err error) (nd.Array, Meta, error) { return a, Meta{}, err }

// imageMeta gives an H×W×C image its channel count.
func imageMeta(a nd.Array, err error) (nd.Array, Meta, error) {
	var m Meta
	if err == nil && len(a.Shape) == 3 {
		m.Channels = a.Shape[2]
	}
	return a, m, err
}

// decodeTIFF reads a TIFF at its offsets where r is a regular file (or
// another io.ReaderAt whose size is known) from its start; a stream is read
// into memory first, once its first bytes are a TIFF header, up to
// maxStreamTIFF bytes.
func decodeTIFF(r io.Reader) (nd.Array, Meta, error) {
	if at, size, ok := readerAt(r); ok {
		img, err := tiff.Read(at, size)
		return img.Array, Meta{Channels: img.Channels}, err
	}
	const notTIFF = "not a TIFF file (no II or MM header)"
	head, err := readHead(r, 4, ".tif", notTIFF)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	switch string(head) {
	case "II*\x00", "MM\x00*", "II+\x00", "MM\x00+":
	default:
		return nd.Array{}, Meta{}, &FormatError{Format: ".tif", Msg: notTIFF}
	}
	data, err := readRest(r, head, maxStreamTIFF, ".tif", "a TIFF read from a stream may hold (a larger one must be a regular file)")
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	img, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	return img.Array, Meta{Channels: img.Channels}, err
}

// readerAt returns r as an io.ReaderAt of the given size when r is a
// regular file or a *bytes.Reader not yet read from: then a decoder that
// reads at offsets need not read the whole file first.
func readerAt(r io.Reader) (io.ReaderAt, int64, bool) {
	switch v := r.(type) {
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, 0, false
		}
		if pos, err := v.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
			return nil, 0, false
		}
		return v, fi.Size(), true
	case *bytes.Reader:
		if int64(v.Len()) == v.Size() {
			return v, v.Size(), true
		}
	}
	return nil, 0, false
}

// writeTIFF writes pages of one sample per pixel, or of the input's
// channels when the array's last axis still holds them.
func writeTIFF(w io.Writer, a nd.Array, opt WriteOptions) error {
	img := tiff.Image{Array: a}
	if c := opt.Meta.Channels; c > 0 && len(a.Shape) >= 3 && a.Shape[len(a.Shape)-1] == c {
		img.Channels = c
	}
	return tiff.Write(w, img, opt.TIFF)
}

func decodeNIfTI(r io.Reader) (nd.Array, Meta, error) {
	a, h, err := nifti.Read(r)
	return a, Meta{NIfTI: h}, err
}

// formatOf returns the format of path's extension; a path with a
// component ending in .zarr names a Zarr array (x.zarr/group/array),
// unless it is a regular file (a chunk inside the store, found by a walk
// of folders).
func formatOf(path string) (format, error) {
	if _, _, ok := zarrPath(path); ok {
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || blobstore.IsURL(path) {
			return zarrFormat, nil
		}
	}
	if blobstore.IsURL(path) {
		return format{}, &UnsupportedError{What: "URL", Value: path,
			Detail: "buckets hold Zarr arrays only: name one by a path with a component ending in .zarr (s3://bucket/dir/x.zarr)"}
	}
	lower := strings.ToLower(path)
	for _, f := range formats {
		for _, ext := range f.extensions {
			if strings.HasSuffix(lower, ext) && len(lower) > len(ext) {
				return f, nil
			}
		}
	}
	ext := filepath.Ext(lower)
	if ext == "" {
		ext = "(none)"
	}
	var known []string
	for _, f := range formats {
		known = append(known, f.extensions...)
	}
	known = append(known, zarrFormat.extensions...)
	return format{}, &UnsupportedError{What: "file extension", Value: ext,
		Detail: path + ": use " + strings.Join(known, ", ") + " (.raw with --shape and --input-dtype)"}
}

// IsImageFile reports whether path names a format that holds only images
// (H×W or H×W×C with C from 1 to 4), such as .png and .jpg: no volumes and
// no filter-bank outputs.
func IsImageFile(path string) bool {
	f, err := formatOf(path)
	return err == nil && f.image
}

// ReadFile reads an array from path, choosing the format by extension, and
// returns what the file says about it.
func ReadFile(path string, raw RawOptions) (nd.Array, Meta, error) {
	f, err := formatOf(path)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	var a nd.Array
	var m Meta
	switch {
	case f.readPath != nil:
		a, m, err = f.readPath(context.Background(), path)
	case f.decode == nil:
		a, err = ReadRawFile(path, raw)
	default:
		a, m, err = decodeFile(path, f.decode)
	}
	if err != nil {
		return nd.Array{}, Meta{}, fmt.Errorf("read %s: %w", path, err)
	}
	return a, m, nil
}

// Decode reads an array in the format that name's extension names from r.
func Decode(name string, r io.Reader) (nd.Array, Meta, error) {
	f, err := formatOf(name)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	if f.readPath != nil {
		return nd.Array{}, Meta{}, &UnsupportedError{What: "format", Value: ".zarr", Detail: "a directory of chunks, read with ReadFile"}
	}
	if f.decode == nil {
		return nd.Array{}, Meta{}, &UnsupportedError{What: "format", Value: filepath.Ext(name), Detail: "needs a file, its shape and dtype"}
	}
	return f.decode(r)
}

// decodeFile opens path and decodes it. The *os.File is passed as it is,
// so that decoders that check claimed sizes against the file's can.
func decodeFile(path string, decode func(io.Reader) (nd.Array, Meta, error)) (nd.Array, Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	defer f.Close()
	return decode(f)
}

// WriteFile writes a to path in the format its extension names, through a
// temporary file in the same directory that is renamed into place: a
// failed write leaves nothing behind, and path may be the file the input
// was read from.
func WriteFile(path string, a nd.Array, opt WriteOptions) error {
	return WriteFileContext(context.Background(), path, a, opt)
}

// WriteFileContext is WriteFile that stops when ctx is done, leaving
// neither path nor a temporary file, and returns ctx's cause.
func WriteFileContext(ctx context.Context, path string, a nd.Array, opt WriteOptions) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	if err := a.Check(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.checkDType(path, a.DType()); err != nil {
		return err
	}
	if f.writePath != nil {
		if err := f.writePath(ctx, path, a, opt); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	if err := fileio.WriteAtomicContext(ctx, path, func(w io.Writer) error { return f.write(w, a, opt) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckDType reports whether the format of path holds arrays of dt:
// complex ones only .npy and .raw do.
func CheckDType(path string, dt nd.DType) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	return f.checkDType(path, dt)
}

func (f format) checkDType(path string, dt nd.DType) error {
	if dt.IsComplex() && !f.complex {
		return complexError(f.extensions[0], path+": ", dt)
	}
	return nil
}

// complexError refuses a complex array in a format of real samples.
func complexError(format, where string, dt nd.DType) error {
	return &UnsupportedError{Format: format, What: "dtype", Value: dt.String(),
		Detail: where + "complex arrays are written as .npy (or .raw)"}
}

// CheckWritable reports, before any work is done, whether an output could
// be written to path: a known extension and an existing directory.
func CheckWritable(path string) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	if f.writePath != nil {
		return checkZarrWritable(path)
	}
	return checkOutputDir(path, filepath.Dir(path))
}

// checkOutputDir checks that dir, where output path is to be written,
// exists and is a directory.
func checkOutputDir(path, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output %s: directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("output %s: %s is not a directory", path, dir)
	}
	return nil
}

// ReadRawFile reads a headerless little-endian C-order file whose shape and
// dtype are given; its size must match them exactly.
func ReadRawFile(path string, raw RawOptions) (nd.Array, error) {
	if len(raw.Shape) == 0 || !raw.DType.Valid() {
		return nd.Array{}, &FormatError{Format: ".raw", Msg: "a .raw input needs --shape and --input-dtype"}
	}
	n, err := nd.NumElements(raw.Shape)
	if err != nil {
		return nd.Array{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nd.Array{}, err
	}
	want := int64(n) * int64(raw.DType.Size())
	regular := fi.Mode().IsRegular()
	if regular && fi.Size() != want {
		return nd.Array{}, &FormatError{Format: ".raw", Msg: fmt.Sprintf("the file has %d bytes; shape %v of %v needs %d", fi.Size(), raw.Shape, raw.DType, want)}
	}
	// A stream (a FIFO, a device) has no size to check: it is read in
	// pieces that grow with what arrives, up to what the shape needs, and
	// must end there.
	data, err := readNPYData(f, npyHeader{dtype: raw.DType, shape: raw.Shape, n: n, nbytes: want}, regular)
	if err != nil {
		var fe *FormatError
		if !regular && errors.As(err, &fe) && errors.Is(err, io.ErrUnexpectedEOF) {
			return nd.Array{}, &FormatError{Format: ".raw", Msg: fmt.Sprintf("%s ended before the %d bytes shape %v of %v needs", streamKind(fi.Mode()), want, raw.Shape, raw.DType), Err: err}
		}
		return nd.Array{}, err
	}
	if !regular {
		var more [1]byte
		if k, _ := io.ReadFull(f, more[:]); k > 0 {
			return nd.Array{}, &FormatError{Format: ".raw", Msg: fmt.Sprintf("%s holds more than the %d bytes shape %v of %v needs", streamKind(fi.Mode()), want, raw.Shape, raw.DType)}
		}
	}
	return nd.Array{Shape: append([]int(nil), raw.Shape...), Data: data}, nil
}

// streamKind names a file that is not a regular file, for errors.
func streamKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "the FIFO"
	case m&fs.ModeCharDevice != 0:
		return "the character device"
	case m&fs.ModeDevice != 0:
		return "the device"
	case m&fs.ModeSocket != 0:
		return "the socket"
	case m.IsDir():
		return "the directory"
	}
	return "the stream"
}
