package imageio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
	"github.com/ndconv/ndconv/nd"
)

// ErrNotMappable reports a file whose data cannot be used in place: big-
// endian or Fortran-order data, an empty or misaligned array, a format
// other than .npy and .raw, or a system without memory maps. Read it with
// ReadFile instead.
var ErrNotMappable = errors.New("imageio: the file's data cannot be mapped as an array")

// MappedArray is an array whose data are a read-only memory map of a .npy
// or .raw file: reading it costs no copy and no host memory beyond the
// pages in use. Writing to its data faults.
type MappedArray struct {
	nd.Array
	mapping []byte
}

// MapFile maps the data of the .npy or .raw file at path (raw gives a .raw
// file's shape and dtype) as an array, when they are in the machine's byte
// order and C order; otherwise it returns ErrNotMappable. Close unmaps it.
func MapFile(path string, raw RawOptions) (*MappedArray, error) {
	m, err := mapArray(path, raw)
	if err != nil && !errors.Is(err, ErrNotMappable) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return m, err
}

func mapArray(path string, raw RawOptions) (*MappedArray, error) {
	f, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotMappable
	}
	size := fi.Size()
	var h npyHeader
	var offset int64
	switch f.extensions[0] {
	case ".npy":
		remain := size
		if h, err = readNPYHeader(file, &remain, true); err != nil {
			return nil, err
		}
		if h.nbytes > remain {
			return nil, npyFormatError(nil, "header claims %d bytes of data, the file has %d", h.nbytes, remain)
		}
		offset = size - remain
	case ".raw":
		if len(raw.Shape) == 0 || !raw.DType.Valid() {
			return nil, &FormatError{Format: ".raw", Msg: "a .raw input needs --shape and --input-dtype"}
		}
		n, err := nd.ShapeElements(raw.Shape) // mapped, not allocated
		if err != nil {
			return nil, err
		}
		h = npyHeader{dtype: raw.DType, shape: slices.Clone(raw.Shape), n: n, nbytes: int64(n) * int64(raw.DType.Size()), big: nativeBigEndian}
		if size != h.nbytes {
			return nil, &FormatError{Format: ".raw", Msg: fmt.Sprintf("the file has %d bytes; shape %v of %v needs %d", size, raw.Shape, raw.DType, h.nbytes)}
		}
	default:
		return nil, ErrNotMappable
	}
	if h.fortran || (h.big != nativeBigEndian && h.dtype.Size() > 1) || h.n == 0 || offset%int64(h.dtype.Size()) != 0 {
		return nil, ErrNotMappable
	}
	mapping, err := mapFile(file, offset+h.nbytes)
	if err != nil {
		return nil, err
	}
	data := mapping[offset : offset+h.nbytes]
	return &MappedArray{Array: nd.Array{Shape: h.shape, Data: nd.ViewBytes(h.dtype, data)}, mapping: mapping}, nil
}

// Close unmaps the data; the array must not be used after.
func (m *MappedArray) Close() error {
	if m.mapping == nil {
		return nil
	}
	err := unmapFile(m.mapping)
	m.mapping, m.Data = nil, nil
	return err
}

// Release lets the system drop the mapped pages read so far from the
// process: a later read maps them again from the page cache. Streaming
// calls it between chunks, so that the pages of a file larger than memory
// do not stay resident.
func (m *MappedArray) Release() {
	if m.mapping != nil {
		releaseMapped(m.mapping)
	}
}

// WriteFileChunks writes an array of dtype dt and the given shape to path,
// a .npy or .raw file, from the pieces produce hands to write in C order:
// host memory holds one piece at a time. It writes through a temporary
// file renamed into place once every element is written, so that an error
// from produce (a cancelled context included) or a short output leaves
// nothing behind.
func WriteFileChunks(path string, dt nd.DType, shape []int, produce func(write func(nd.Array) error) error) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	npy := f.extensions[0] == ".npy"
	if !npy && f.extensions[0] != ".raw" {
		return &UnsupportedError{What: "format", Value: f.extensions[0], Detail: "written chunk by chunk: use .npy or .raw"}
	}
	total, err := nd.ShapeElements(shape) // written a piece at a time
	if err != nil {
		return err
	}
	err = fileio.WriteAtomic(path, func(w io.Writer) error {
		if npy {
			if _, err := w.Write(npyHeaderBytes(npyDescr[dt], false, shape)); err != nil {
				return err
			}
		}
		written := 0
		err := produce(func(a nd.Array) error {
			if a.DType() != dt {
				return fmt.Errorf("a piece of %v for a %v file", a.DType(), dt)
			}
			if written += a.Len(); written > total {
				return fmt.Errorf("pieces of more than the %d elements of shape %v", total, shape)
			}
			return writeLittleEndian(w, a.Data)
		})
		if err == nil && written != total {
			err = fmt.Errorf("pieces of %d elements for the %d of shape %v", written, total, shape)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
