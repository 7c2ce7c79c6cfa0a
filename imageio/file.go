package imageio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
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
}

// WriteOptions are the choices a written file allows.
type WriteOptions struct {
	// Meta is the input's, for formats that carry it over.
	Meta Meta
	// JPEGQuality is 1 to 100, 0 meaning DefaultJPEGQuality.
	JPEGQuality int
}

// A format reads and writes the files of some extensions.
type format struct {
	extensions []string
	// image is true for formats that hold only H×W or H×W×C images, with
	// C samples per pixel.
	image bool
	read  func(path string, raw RawOptions) (nd.Array, Meta, error)
	write func(w io.Writer, a nd.Array, opt WriteOptions) error
}

// formats is every format ReadFile and WriteFile know, by extension.
var formats = []format{
	{extensions: []string{".npy"},
		read:  func(path string, _ RawOptions) (nd.Array, Meta, error) { return noMeta(ReadNPYFile(path)) },
		write: func(w io.Writer, a nd.Array, _ WriteOptions) error { return WriteNPY(w, a) }},
	{extensions: []string{".raw"},
		read:  func(path string, raw RawOptions) (nd.Array, Meta, error) { return noMeta(ReadRawFile(path, raw)) },
		write: func(w io.Writer, a nd.Array, _ WriteOptions) error { return writeLittleEndian(w, a.Data) }},
	{extensions: []string{".png"}, image: true,
		read:  func(path string, _ RawOptions) (nd.Array, Meta, error) { return imageMeta(readWith(path, ReadPNG)) },
		write: func(w io.Writer, a nd.Array, _ WriteOptions) error { return WritePNG(w, a) }},
	{extensions: []string{".jpg", ".jpeg"}, image: true,
		read:  func(path string, _ RawOptions) (nd.Array, Meta, error) { return imageMeta(readWith(path, ReadJPEG)) },
		write: func(w io.Writer, a nd.Array, opt WriteOptions) error { return WriteJPEG(w, a, opt.JPEGQuality) }},
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

// formatOf returns the format of path's extension.
func formatOf(path string) (format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range formats {
		if slices.Contains(f.extensions, ext) {
			return f, nil
		}
	}
	if ext == "" {
		ext = "(none)"
	}
	var known []string
	for _, f := range formats {
		known = append(known, f.extensions...)
	}
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
	a, m, err := f.read(path, raw)
	if err != nil {
		return nd.Array{}, Meta{}, fmt.Errorf("read %s: %w", path, err)
	}
	return a, m, nil
}

// readWith opens path and decodes it with read.
func readWith(path string, read func(io.Reader) (nd.Array, error)) (nd.Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, err
	}
	defer f.Close()
	return read(f)
}

// WriteFile writes a to path in the format its extension names, through a
// temporary file in the same directory that is renamed into place: a
// failed write leaves nothing behind, and path may be the file the input
// was read from.
func WriteFile(path string, a nd.Array, opt WriteOptions) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	if err := a.Check(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { return f.write(w, a, opt) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports, before any work is done, whether an output could
// be written to path: a known extension and an existing directory.
func CheckWritable(path string) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
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
	if fi.Size() != want {
		return nd.Array{}, &FormatError{Format: ".raw", Msg: fmt.Sprintf("the file has %d bytes; shape %v of %v needs %d", fi.Size(), raw.Shape, raw.DType, want)}
	}
	data, err := readNPYData(f, npyHeader{dtype: raw.DType, shape: raw.Shape, n: n, nbytes: want}, true)
	if err != nil {
		return nd.Array{}, err
	}
	return nd.Array{Shape: append([]int(nil), raw.Shape...), Data: data}, nil
}

// writeFileAtomic writes path through a temporary file and a rename.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
