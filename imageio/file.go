package imageio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// RawOptions describe a headerless .raw file: its shape and element type
// (little-endian, C order).
type RawOptions struct {
	Shape []int
	DType nd.DType
}

// ReadFile reads an array from path, choosing the format by extension:
// .npy, or .raw with raw's shape and dtype.
func ReadFile(path string, raw RawOptions) (nd.Array, error) {
	var a nd.Array
	var err error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		a, err = ReadNPYFile(path)
	case ".raw":
		a, err = ReadRawFile(path, raw)
	default:
		return nd.Array{}, unknownExtension(path, ext)
	}
	if err != nil {
		return nd.Array{}, fmt.Errorf("read %s: %w", path, err)
	}
	return a, nil
}

// WriteFile writes a to path in the format its extension names (.npy,
// .raw), through a temporary file in the same directory that is renamed
// into place: a failed write leaves nothing behind, and path may be the
// file the input was read from.
func WriteFile(path string, a nd.Array) error {
	var write func(io.Writer) error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		write = func(w io.Writer) error { return WriteNPY(w, a) }
	case ".raw":
		if err := a.Check(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		write = func(w io.Writer) error { return writeLittleEndian(w, a.Data) }
	default:
		return unknownExtension(path, ext)
	}
	if err := writeFileAtomic(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports, before any work is done, whether an output could
// be written to path: a known extension and an existing directory.
func CheckWritable(path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy", ".raw":
	default:
		return unknownExtension(path, ext)
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

func unknownExtension(path, ext string) error {
	if ext == "" {
		ext = "(none)"
	}
	return &UnsupportedError{What: "file extension", Value: ext, Detail: path + ": use .npy, or .raw with --shape and --input-dtype"}
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
