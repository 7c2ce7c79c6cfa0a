package nifti

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
	"github.com/ndconv/ndconv/nd"
)

const (
	// firstChunk and maxChunk bound the pieces in which voxel data of
	// unknown size (gzipped or streamed) are read: each piece is at most
	// twice the size of those before it, so memory grows with the data
	// that arrive, not with what the header claims.
	firstChunk = 64 << 10
	maxChunk   = 64 << 20
)

// Read reads a NIfTI-1 volume (.nii, or .nii.gz: gzip is recognised by its
// magic bytes) from r, returning its voxels in nibabel's axis order and its
// header; see the package documentation for the element types and scaling.
//
// If r reports how much it holds (a Len method, as *bytes.Reader has, or an
// io.Seeker such as a regular *os.File) and is not gzipped, a header that
// claims more voxels than remain is refused before anything is allocated.
// Otherwise the voxels are read in chunks that grow with the data that
// arrive. Read stops at the end of the voxel data and ignores anything
// after it, as nibabel does; of a gzip stream it reads one byte more, so
// that a stream that ends there has its checksum checked.
func Read(r io.Reader) (nd.Array, *Header, error) {
	remain, known, err := fileio.Remaining(r)
	if err != nil {
		return nd.Array{}, nil, err
	}
	return read(r, remain, known)
}

// ReadFile reads the NIfTI-1 file at path with Read, checking the header
// against the size of the file.
func ReadFile(path string) (nd.Array, *Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, nil, err
	}
	defer f.Close()
	remain, known := int64(0), false
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		remain, known = fi.Size(), true
	}
	a, h, err := read(f, remain, known)
	if err != nil {
		return nd.Array{}, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return a, h, nil
}

// read reads a volume from r, which holds remain bytes if known.
func read(r io.Reader, remain int64, known bool) (nd.Array, *Header, error) {
	src, gz, err := decompress(r)
	if err != nil {
		return nd.Array{}, nil, err
	}
	if gz != nil {
		known = false // remain counts compressed bytes
	}
	h, err := readHeader(src)
	if err != nil {
		return nd.Array{}, nil, err
	}
	st, err := h.check()
	if err != nil {
		return nd.Array{}, nil, err
	}
	shape := h.shape()
	skip := int64(h.VoxOffset) - HeaderSize
	nbytes := claimedBytes(shape, st.size)
	if known && nbytes > remain-HeaderSize-skip {
		return nd.Array{}, nil, formatErrorf(nil, "the header claims %d bytes of voxels from offset %d, the file has %d bytes",
			nbytes, int64(h.VoxOffset), remain)
	}
	count, err := nd.NumElements(shape)
	if err != nil {
		return nd.Array{}, nil, &UnsupportedError{What: "volume shape", Value: fmt.Sprint(shape),
			Detail: fmt.Sprintf("more than nd.MaxElements = %d voxels", nd.MaxElements)}
	}
	if _, err := io.CopyN(io.Discard, src, skip); err != nil {
		return nd.Array{}, nil, readError(err, "extensions before vox_offset")
	}
	if !known {
		if src, err = readChunks(src, int64(count)*int64(st.size)); err != nil {
			return nd.Array{}, nil, err
		}
	}

	var sc *scaling
	out := st.out
	if slope, inter, ok := h.scaling(); ok {
		sc = &scaling{slope: slope, inter: inter}
		out = nd.Float32
		if st.wide {
			out = nd.Float64
		}
		h.SclSlope, h.SclInter = 1, 0
	}
	a, err := nd.New(out, shape...)
	if err != nil {
		return nd.Array{}, nil, err
	}
	var order binary.ByteOrder = binary.LittleEndian
	if h.BigEndian {
		order = binary.BigEndian
	}
	if err := st.decode(src, order, a.Data, newOdometer(shape), sc); err != nil {
		return nd.Array{}, nil, err
	}
	if gz != nil {
		if err := checkGzipEnd(gz); err != nil {
			return nd.Array{}, nil, err
		}
	}
	return a, h, nil
}

// decompress returns the bytes of r, decompressed by gz when r starts with
// gzip's magic bytes (gz is nil otherwise).
func decompress(r io.Reader) (src io.Reader, gz *gzip.Reader, err error) {
	var start [2]byte
	n, err := io.ReadFull(r, start[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, readError(err, "header")
	}
	src = io.MultiReader(bytes.NewReader(start[:n]), r)
	if n < 2 || start[0] != 0x1f || start[1] != 0x8b {
		return src, nil, nil
	}
	if gz, err = gzip.NewReader(src); err != nil {
		return nil, nil, readError(err, "gzip header")
	}
	return gz, gz, nil
}

// readHeader reads the 348-byte header, recognising the byte order by
// sizeof_hdr and refusing NIfTI-2, .hdr/.img pairs and ANALYZE 7.5.
func readHeader(r io.Reader) (*Header, error) {
	h := &Header{}
	if n, err := io.ReadFull(r, h.Raw[:]); err != nil {
		return nil, readError(err, fmt.Sprintf("header (%d of %d bytes)", n, HeaderSize))
	}
	le, be := binary.LittleEndian.Uint32(h.Raw[:]), binary.BigEndian.Uint32(h.Raw[:])
	switch {
	case le == HeaderSize:
	case be == HeaderSize:
		h.BigEndian = true
		swapToLittleEndian(&h.Raw)
	case le == nifti2HeaderSize || be == nifti2HeaderSize:
		return nil, &UnsupportedError{What: "format", Value: "NIfTI-2",
			Detail: "ndconv reads NIfTI-1; convert the file, e.g. with nibabel's Nifti1Image"}
	default:
		return nil, formatErrorf(nil, "not a NIfTI-1 file (sizeof_hdr is %d, not 348)", int32(le))
	}
	switch magic := string(h.Raw[344:348]); magic {
	case magicSingle:
	case magicPair:
		return nil, &UnsupportedError{What: "format", Value: "NIfTI-1 .hdr/.img pair",
			Detail: `magic "ni1": convert it to a single .nii file, e.g. with nibabel or fslchfiletype`}
	case "\x00\x00\x00\x00":
		return nil, &UnsupportedError{What: "format", Value: "ANALYZE 7.5",
			Detail: "a header without NIfTI's magic; ndconv reads NIfTI-1 .nii files"}
	default:
		return nil, formatErrorf(nil, "bad magic %q (want %q)", magic, magicSingle)
	}
	h.decode()
	return h, nil
}

// check validates the fields that say where the voxels are and what they
// are, and returns their storage.
func (h *Header) check() (storage, error) {
	rank := int(h.Dim[0])
	if rank < 1 || rank > maxRank {
		return storage{}, formatErrorf(nil, "dim[0] is %d; NIfTI-1 allows 1 to %d axes", rank, maxRank)
	}
	for i := 1; i <= rank; i++ {
		if h.Dim[i] < 1 {
			return storage{}, formatErrorf(nil, "dim[%d] is %d; an axis has at least one voxel", i, h.Dim[i])
		}
	}
	off := float64(h.VoxOffset)
	if off != math.Trunc(off) || off < dataOffset || off > maxVoxOffset {
		return storage{}, formatErrorf(nil, "vox_offset is %v; a .nii file needs a whole number from %d to %d",
			h.VoxOffset, dataOffset, maxVoxOffset)
	}
	st, ok := storages[h.Datatype]
	switch {
	case !ok:
		return storage{}, formatErrorf(nil, "unknown datatype code %d", h.Datatype)
	case st.decode == nil:
		return storage{}, &UnsupportedError{What: "datatype", Value: fmt.Sprintf("%s (%d)", st.name, h.Datatype),
			Detail: "ndconv reads uint8, int8, int16, uint16, int32, uint32, int64, uint64, float32 and float64 volumes"}
	}
	if _, inter, ok := h.scaling(); ok && (math.IsInf(inter, 0) || math.IsNaN(inter)) {
		return storage{}, formatErrorf(nil, "scl_slope is %v but scl_inter is %v", h.SclSlope, h.SclInter)
	}
	return st, nil
}

// scaling reports the slope and intercept that apply to the voxels: when
// scl_slope is finite and non-zero and (scl_slope, scl_inter) ≠ (1, 0).
func (h *Header) scaling() (slope, inter float64, ok bool) {
	slope, inter = float64(h.SclSlope), float64(h.SclInter)
	if slope == 0 || math.IsInf(slope, 0) || math.IsNaN(slope) || slope == 1 && inter == 0 {
		return 0, 0, false
	}
	return slope, inter, true
}

// claimedBytes is the product of shape (extents ≥ 1) and size, saturated
// far below overflow.
func claimedBytes(shape []int, size int) int64 {
	const limit = math.MaxInt64 / 64
	n := int64(size)
	for _, s := range shape {
		if n > limit/int64(s) {
			return limit
		}
		n *= int64(s)
	}
	return n
}

// readChunks reads n bytes from r into pieces that grow with what has
// arrived, and returns a reader of them.
func readChunks(r io.Reader, n int64) (io.Reader, error) {
	var pieces []io.Reader
	size := int64(firstChunk)
	for got := int64(0); got < n; size = min(2*size, maxChunk) {
		p := make([]byte, min(size, n-got))
		k, err := io.ReadFull(r, p)
		got += int64(k)
		if err != nil {
			return nil, readError(err, fmt.Sprintf("voxel data (%d of %d bytes)", got, n))
		}
		pieces = append(pieces, bytes.NewReader(p))
	}
	return io.MultiReader(pieces...), nil
}

// checkGzipEnd reads on to the end of the gzip member, where gzip checks
// its checksum. Data after the voxels are ignored, as nibabel ignores them.
func checkGzipEnd(gz *gzip.Reader) error {
	var b [1]byte
	if _, err := gz.Read(b[:]); errors.Is(err, gzip.ErrChecksum) {
		return formatErrorf(err, "corrupt gzip stream")
	}
	return nil
}

// readError reports an error reading what: an early end or corrupt gzip
// data as a *FormatError, anything else (an I/O error) wrapped.
func readError(err error, what string) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return formatErrorf(io.ErrUnexpectedEOF, "truncated %s", what)
	case errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt):
		return formatErrorf(err, "corrupt gzip stream in %s", what)
	}
	return fmt.Errorf("nifti: reading %s: %w", what, err)
}
