package nifti

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/ndconv/ndconv/nd"
)

// storage describes one NIfTI datatype: how its voxels are stored and
// which array they are read into.
type storage struct {
	name string
	size int      // bytes per voxel
	out  nd.DType // the array's element type when no scaling applies
	// wide marks types whose scaled values need float64: values that
	// float32 cannot hold exactly.
	wide bool
	// decode reads the voxels; nil (with size 0) for a type this package
	// refuses.
	decode func(r io.Reader, order binary.ByteOrder, dst any, o *odometer, sc *scaling) error
}

// storages maps every NIFTI_TYPE_* code of nifti1.h to its storage.
var storages = map[int16]storage{
	1:    {name: "binary"},
	2:    {name: "uint8", size: 1, out: nd.Uint8, decode: decodeVoxels[uint8]},
	4:    {name: "int16", size: 2, out: nd.Int16, decode: decodeVoxels[int16]},
	8:    {name: "int32", size: 4, out: nd.Int32, wide: true, decode: decodeVoxels[int32]},
	16:   {name: "float32", size: 4, out: nd.Float32, decode: decodeVoxels[float32]},
	32:   {name: "complex64"},
	64:   {name: "float64", size: 8, out: nd.Float64, wide: true, decode: decodeVoxels[float64]},
	128:  {name: "RGB24"},
	256:  {name: "int8", size: 1, out: nd.Int8, decode: decodeVoxels[int8]},
	512:  {name: "uint16", size: 2, out: nd.Uint16, decode: decodeVoxels[uint16]},
	768:  {name: "uint32", size: 4, out: nd.Uint32, wide: true, decode: decodeVoxels[uint32]},
	1024: {name: "int64", size: 8, out: nd.Int64, wide: true, decode: decodeVoxels[int64]},
	1280: {name: "uint64", size: 8, out: nd.Uint64, wide: true, decode: decodeVoxels[uint64]},
	1536: {name: "float128"},
	1792: {name: "complex128"},
	2048: {name: "complex256"},
	2304: {name: "RGBA32"},
}

// datatypeOf is the NIFTI_TYPE_* code that stores dt unchanged.
func datatypeOf(dt nd.DType) (int16, bool) {
	switch dt {
	case nd.Uint8:
		return 2, true
	case nd.Int16:
		return 4, true
	case nd.Int32:
		return 8, true
	case nd.Float32:
		return 16, true
	case nd.Float64:
		return 64, true
	case nd.Uint16:
		return 512, true
	case nd.Int8:
		return 256, true
	case nd.Uint32:
		return 768, true
	case nd.Int64:
		return 1024, true
	case nd.Uint64:
		return 1280, true
	}
	return 0, false
}

// scaling is v·slope + inter, applied in float64.
type scaling struct{ slope, inter float64 }

// apply scales v as nibabel's apply_read_scaling does: multiply unless the
// slope is 1, then add unless the intercept is 0 (so −0 stays −0), each
// step rounded to float64 (the conversion keeps the compiler from fusing
// them into one multiply-add).
func (s *scaling) apply(v float64) float64 {
	if s.slope != 1 {
		v = float64(v * s.slope)
	}
	if s.inter != 0 {
		v += s.inter
	}
	return v
}

// diskNumber is the set of element types NIfTI files store that this
// package reads.
type diskNumber interface {
	uint8 | int8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64
}

// chunkElems is the number of voxels converted at a time.
const chunkElems = 1 << 16

// odometer walks the positions of a C-order array in the file's Fortran
// order (axis 0 fastest), along rows of axis 0.
type odometer struct {
	shape   []int
	strides []int // C-order strides
	idx     []int
	pos     int // C-order offset of idx
}

func newOdometer(shape []int) *odometer {
	return &odometer{shape: shape, strides: nd.Strides(shape), idx: make([]int, len(shape))}
}

// row returns the C-order offset and stride of the next voxels in file
// order, and how many remain on the current row of axis 0.
func (o *odometer) row() (pos, stride, left int) {
	return o.pos, o.strides[0], o.shape[0] - o.idx[0]
}

// advance moves n ≤ left voxels along the current row, carrying into the
// next axes at the row's end.
func (o *odometer) advance(n int) {
	o.idx[0] += n
	o.pos += n * o.strides[0]
	for d := 0; d < len(o.idx)-1 && o.idx[d] == o.shape[d]; d++ {
		o.pos -= o.idx[d] * o.strides[d]
		o.idx[d] = 0
		o.idx[d+1]++
		o.pos += o.strides[d+1]
	}
}

// decodeVoxels reads the voxels of o's array from r, stored as S in the
// given byte order, converts each to dst's element type (scaled by sc when
// it is not nil) and places it at its C-order position.
func decodeVoxels[S diskNumber](r io.Reader, order binary.ByteOrder, dst any, o *odometer, sc *scaling) error {
	total, _ := nd.NumElements(o.shape)
	size := binary.Size(S(0))
	chunk := make([]S, min(total, chunkElems))
	buf := make([]byte, len(chunk)*size)
	for done := 0; done < total; {
		c := chunk[:min(total-done, len(chunk))]
		b := buf[:len(c)*size]
		if n, err := io.ReadFull(r, b); err != nil {
			return readError(err, fmt.Sprintf("voxel data (%d of %d bytes)", done*size+n, total*size))
		}
		if _, err := binary.Decode(b, order, c); err != nil {
			return fmt.Errorf("nifti: decoding voxels: %w", err)
		}
		place(dst, c, o, sc)
		done += len(c)
	}
	return nil
}

// place converts src into dst (an Array's Data) at the positions o
// visits, scaling when sc is not nil (dst is then float32 or float64).
func place[S diskNumber](dst any, src []S, o *odometer, sc *scaling) {
	switch d := dst.(type) {
	case []uint8:
		placeConverted(d, src, o, nil)
	case []int8:
		placeConverted(d, src, o, nil)
	case []uint32:
		placeConverted(d, src, o, nil)
	case []int64:
		placeConverted(d, src, o, nil)
	case []uint64:
		placeConverted(d, src, o, nil)
	case []uint16:
		placeConverted(d, src, o, nil)
	case []int16:
		placeConverted(d, src, o, nil)
	case []int32:
		placeConverted(d, src, o, nil)
	case []float32:
		placeConverted(d, src, o, sc)
	case []float64:
		placeConverted(d, src, o, sc)
	}
}

func placeConverted[T nd.RealElement, S diskNumber](dst []T, src []S, o *odometer, sc *scaling) {
	for len(src) > 0 {
		pos, stride, left := o.row()
		n := min(left, len(src))
		if sc != nil {
			for i, v := range src[:n] {
				dst[pos+i*stride] = T(sc.apply(float64(v)))
			}
		} else {
			for i, v := range src[:n] {
				dst[pos+i*stride] = T(v)
			}
		}
		o.advance(n)
		src = src[n:]
	}
}

// encodeVoxels writes data, the C-order values of o's array, to w in
// file order, little-endian.
func encodeVoxels[T nd.RealElement](w io.Writer, data []T, o *odometer) error {
	size := binary.Size(T(0))
	chunk := make([]T, min(len(data), chunkElems))
	buf := make([]byte, len(chunk)*size)
	for done := 0; done < len(data); {
		c := chunk[:min(len(data)-done, len(chunk))]
		for filled := 0; filled < len(c); {
			pos, stride, left := o.row()
			n := min(left, len(c)-filled)
			for i := range n {
				c[filled+i] = data[pos+i*stride]
			}
			o.advance(n)
			filled += n
		}
		b := buf[:len(c)*size]
		if _, err := binary.Encode(b, binary.LittleEndian, c); err != nil {
			return fmt.Errorf("nifti: encoding voxels: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("nifti: writing voxels: %w", err)
		}
		done += len(c)
	}
	return nil
}

// finiteRange returns the smallest and largest finite values of data as
// float32 rounded outwards, for cal_min and cal_max; (0, 0) if there are
// none.
func finiteRange[T nd.RealElement](data []T) (lo, hi float32) {
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, v := range data {
		f := float64(v)
		if f < minV && !math.IsInf(f, 0) {
			minV = f
		}
		if f > maxV && !math.IsInf(f, 0) {
			maxV = f
		}
	}
	if minV > maxV {
		return 0, 0
	}
	return float32Toward(minV, -1), float32Toward(maxV, 1)
}

// float32Toward returns v as a float32 rounded towards −∞ (dir < 0) or +∞
// (dir > 0), clamped to float32's finite range.
func float32Toward(v float64, dir int) float32 {
	f := float32(v)
	switch {
	case math.IsInf(float64(f), 0):
		return float32(math.Copysign(math.MaxFloat32, v))
	case dir < 0 && float64(f) > v:
		return math.Nextafter32(f, float32(math.Inf(-1)))
	case dir > 0 && float64(f) < v:
		return math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}
