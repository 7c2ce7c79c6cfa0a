package nifti

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
	"github.com/ndconv/ndconv/nd"
)

// Write writes a as a single-file NIfTI-1 volume ("n+1", little-endian,
// vox_offset 352, no extensions) with the fields of h, or of NewHeader()
// when h is nil. a is indexed as Read returns arrays ([x, y, z, t, …]); its
// rank must be 1 to 7, every extent 1 to 32767, and its dtype one of nd's.
//
// The array sets dim (trailing entries 1), datatype, bitpix, vox_offset,
// scl_slope = 1 and scl_inter = 0 (no scaling, as nibabel writes it),
// cal_min and cal_max (the range of the finite values, rounded outwards to
// float32; 0 and 0 when there are none). Every other field is h's, with two
// repairs so that the result reads back with the geometry h means: a qfac
// pixdim[0] other than −1 is written as 1, and the voxel size of an axis
// the header did not have (beyond h.Dim[0], such as a filter bank's axis)
// is written as 1 when it is not a positive number. h is not modified.
func Write(w io.Writer, a nd.Array, h *Header) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("nifti: %w", err)
	}
	switch d := a.Data.(type) {
	case []uint8:
		return write(w, a.Shape, d, h)
	case []int8:
		return write(w, a.Shape, d, h)
	case []uint32:
		return write(w, a.Shape, d, h)
	case []int64:
		return write(w, a.Shape, d, h)
	case []uint64:
		return write(w, a.Shape, d, h)
	case []uint16:
		return write(w, a.Shape, d, h)
	case []int16:
		return write(w, a.Shape, d, h)
	case []int32:
		return write(w, a.Shape, d, h)
	case []float32:
		return write(w, a.Shape, d, h)
	case []float64:
		return write(w, a.Shape, d, h)
	}
	return &UnsupportedError{What: "dtype", Value: a.DType().String(), Detail: "NIfTI-1 files hold " + writableNames()}
}

// WritableDTypes are the dtypes Write stores unchanged: all but float16,
// which NIfTI-1 has no type for.
var WritableDTypes = []nd.DType{nd.Uint8, nd.Int8, nd.Uint16, nd.Int16, nd.Uint32, nd.Int32, nd.Uint64, nd.Int64, nd.Float32, nd.Float64}

func writableNames() string {
	var names []string
	for _, d := range WritableDTypes {
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}

func write[T nd.RealElement](w io.Writer, shape []int, data []T, h *Header) error {
	hdr, err := headerFor(shape, nd.DTypeOf(data), h)
	if err != nil {
		return err
	}
	hdr.CalMin, hdr.CalMax = finiteRange(data)
	raw, err := hdr.encode()
	if err != nil {
		return err
	}
	if _, err := w.Write(append(raw[:], 0, 0, 0, 0)); err != nil {
		return fmt.Errorf("nifti: writing the header: %w", err)
	}
	return encodeVoxels(w, data, newOdometer(shape))
}

// headerFor returns a copy of h (or NewHeader()) with the fields that
// describe voxels of the given shape and dtype set, all but cal_min and
// cal_max.
func headerFor(shape []int, dt nd.DType, h *Header) (*Header, error) {
	rank := len(shape)
	if rank < 1 || rank > maxRank {
		return nil, &UnsupportedError{What: "array rank", Value: fmt.Sprint(rank),
			Detail: "NIfTI-1 holds 1 to 7 axes"}
	}
	for _, n := range shape {
		if n < 1 || n > math.MaxInt16 {
			return nil, &UnsupportedError{What: "array shape", Value: fmt.Sprint(shape),
				Detail: "NIfTI-1 extents are 1 to 32767"}
		}
	}
	code, ok := datatypeOf(dt)
	if !ok {
		return nil, &UnsupportedError{What: "array dtype", Value: dt.String()}
	}
	if h == nil {
		h = NewHeader()
	}
	out := *h
	oldRank := int(h.Dim[0])
	out.Dim = [8]int16{int16(rank), 1, 1, 1, 1, 1, 1, 1}
	for i, n := range shape {
		out.Dim[i+1] = int16(n)
	}
	if out.Pixdim[0] != -1 {
		out.Pixdim[0] = 1
	}
	for i := max(oldRank, 0) + 1; i <= rank; i++ {
		if p := out.Pixdim[i]; !(p > 0) || math.IsInf(float64(p), 0) {
			out.Pixdim[i] = 1
		}
	}
	out.Datatype = code
	out.Bitpix = int16(8 * dt.Size())
	out.VoxOffset = dataOffset
	out.SclSlope, out.SclInter = 1, 0
	return &out, nil
}

// WriteFile writes a to path with Write, gzipped when path ends in .gz
// (.nii.gz). It writes a temporary file in the same directory and renames
// it over path, so a failed write leaves nothing behind and path may be the
// file the input was read from.
func WriteFile(path string, a nd.Array, h *Header) error {
	compress := strings.HasSuffix(strings.ToLower(path), ".gz")
	err := fileio.WriteAtomic(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		if !compress {
			if err := Write(bw, a, h); err != nil {
				return err
			}
			return bw.Flush()
		}
		// Level 1, as nibabel compresses: volumes are large and mostly
		// noise, where higher levels cost much time for little size.
		zw, err := gzip.NewWriterLevel(bw, gzip.BestSpeed)
		if err != nil {
			return err
		}
		if err := Write(zw, a, h); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
