package nifti

import (
	"encoding/binary"
	"math"
	"strconv"
)

// The NIfTI-1 layout (nifti1.h): a 348-byte header, then in a single .nii
// file 4 bytes that flag extensions, any extensions, and the voxels from
// byte vox_offset on.
const (
	// HeaderSize is sizeof_hdr of NIfTI-1 and the length of Header.Raw.
	HeaderSize = 348
	// nifti2HeaderSize is sizeof_hdr of NIfTI-2, recognised to refuse it.
	nifti2HeaderSize = 540
	// dataOffset is vox_offset of a file without extensions: the header
	// and the 4-byte extension flag.
	dataOffset = HeaderSize + 4
	// maxVoxOffset bounds vox_offset: a header and extensions of more than
	// 1 GiB mean a corrupt header, not a volume.
	maxVoxOffset = 1 << 30
	// maxRank is the largest dim[0].
	maxRank = 7

	magicSingle = "n+1\x00" // header and data in one .nii file
	magicPair   = "ni1\x00" // header in .hdr, data in .img
)

// Header is a NIfTI-1 header as read: every field of nifti1.h that ndconv
// keeps, by its nifti1.h name, in the file's units. Write encodes these
// fields over a copy of Raw, so the fields left unnamed (ANALYZE 7.5's
// data_type, db_name, extents, session_error, regular, glmax, glmin) are
// kept from Raw; a field changed here is written as changed.
//
// Datatype, Bitpix, Dim, VoxOffset, SclSlope, SclInter, CalMin and CalMax
// describe the file that was read; Write sets them from the array it
// writes. When Read scales the voxels it resets SclSlope and SclInter to
// 1 and 0 (see the package documentation).
type Header struct {
	// Raw is the 348-byte header as read, converted to little-endian.
	Raw [HeaderSize]byte
	// BigEndian reports that the file was big-endian.
	BigEndian bool

	DimInfo       uint8      // dim_info: frequency, phase and slice axes
	Dim           [8]int16   // dim: Dim[0] is the rank, Dim[1:Dim[0]+1] the shape
	IntentP       [3]float32 // intent_p1, intent_p2, intent_p3
	IntentCode    int16      // intent_code
	Datatype      int16      // datatype: the NIFTI_TYPE_* code of the voxels in the file
	Bitpix        int16      // bitpix: bits per voxel
	SliceStart    int16      // slice_start
	Pixdim        [8]float32 // pixdim: Pixdim[0] is qfac (±1), Pixdim[1:] the voxel size per axis
	VoxOffset     float32    // vox_offset: where the voxels start
	SclSlope      float32    // scl_slope
	SclInter      float32    // scl_inter
	SliceEnd      int16      // slice_end
	SliceCode     uint8      // slice_code
	XYZTUnits     uint8      // xyzt_units: NIFTI_UNITS_* of space | of time
	CalMax        float32    // cal_max: display range
	CalMin        float32    // cal_min
	SliceDuration float32    // slice_duration
	TOffset       float32    // toffset
	Descrip       string     // descrip: at most 80 bytes
	AuxFile       string     // aux_file: at most 24 bytes
	QformCode     int16      // qform_code: NIFTI_XFORM_* of the quaternion transform
	SformCode     int16      // sform_code: NIFTI_XFORM_* of the affine rows
	QuaternB      float32    // quatern_b
	QuaternC      float32    // quatern_c
	QuaternD      float32    // quatern_d
	QOffset       [3]float32 // qoffset_x, qoffset_y, qoffset_z
	SRow          [3][4]float32
	IntentName    string // intent_name: at most 16 bytes
}

// NewHeader returns the header Write uses when it is given none: every
// field zero except Pixdim, which is all 1 (qfac 1 and unit voxels). So
// qform_code and sform_code are 0 (no transform), xyzt_units is 0
// (unknown units), descrip is empty, and Affine is nibabel's fallback for
// such a header: voxel sizes of 1 with x flipped, centred on the volume.
func NewHeader() *Header {
	h := &Header{}
	for i := range h.Pixdim {
		h.Pixdim[i] = 1
	}
	return h
}

// text is a fixed-length, NUL-padded character field.
type text struct {
	s *string
	n int
}

// field binds one header field, at byte off of Raw, to where Header holds
// it: a *uint8, *int16, *float32 or text.
type field struct {
	off int
	ptr any
}

// fields lists every named field of h with its offset in nifti1.h: the one
// place that knows the layout, used to parse, encode and byte-swap.
func (h *Header) fields() []field {
	f := []field{
		{39, &h.DimInfo},
		{68, &h.IntentCode}, {70, &h.Datatype}, {72, &h.Bitpix}, {74, &h.SliceStart},
		{108, &h.VoxOffset}, {112, &h.SclSlope}, {116, &h.SclInter},
		{120, &h.SliceEnd}, {122, &h.SliceCode}, {123, &h.XYZTUnits},
		{124, &h.CalMax}, {128, &h.CalMin}, {132, &h.SliceDuration}, {136, &h.TOffset},
		{148, text{&h.Descrip, 80}}, {228, text{&h.AuxFile, 24}},
		{252, &h.QformCode}, {254, &h.SformCode},
		{256, &h.QuaternB}, {260, &h.QuaternC}, {264, &h.QuaternD},
		{328, text{&h.IntentName, 16}},
	}
	for i := range h.Dim {
		f = append(f, field{40 + 2*i, &h.Dim[i]})
	}
	for i := range h.IntentP {
		f = append(f, field{56 + 4*i, &h.IntentP[i]})
	}
	for i := range h.Pixdim {
		f = append(f, field{76 + 4*i, &h.Pixdim[i]})
	}
	for i := range h.QOffset {
		f = append(f, field{268 + 4*i, &h.QOffset[i]})
	}
	for r := range h.SRow {
		for c := range h.SRow[r] {
			f = append(f, field{280 + 16*r + 4*c, &h.SRow[r][c]})
		}
	}
	return f
}

// unnamedNumeric are the numeric fields Header does not name, as
// (offset, size): sizeof_hdr, extents, session_error, glmax, glmin. Only
// byte swapping needs them.
var unnamedNumeric = [][2]int{{0, 4}, {32, 4}, {36, 2}, {140, 4}, {144, 4}}

// swapToLittleEndian reverses the bytes of every numeric field of a
// big-endian header.
func swapToLittleEndian(raw *[HeaderSize]byte) {
	var scratch Header
	spans := append([][2]int(nil), unnamedNumeric...)
	for _, f := range scratch.fields() {
		switch f.ptr.(type) {
		case *int16:
			spans = append(spans, [2]int{f.off, 2})
		case *float32:
			spans = append(spans, [2]int{f.off, 4})
		}
	}
	for _, s := range spans {
		b := raw[s[0] : s[0]+s[1]]
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
}

// decode sets h's named fields from the little-endian h.Raw.
func (h *Header) decode() {
	le := binary.LittleEndian
	for _, f := range h.fields() {
		b := h.Raw[f.off:]
		switch p := f.ptr.(type) {
		case *uint8:
			*p = b[0]
		case *int16:
			*p = int16(le.Uint16(b))
		case *float32:
			*p = math.Float32frombits(le.Uint32(b))
		case text:
			s := b[:p.n]
			for i, c := range s {
				if c == 0 {
					s = s[:i]
					break
				}
			}
			*p.s = string(s)
		}
	}
}

// encode returns h as a little-endian single-file NIfTI-1 header: Raw
// with every named field, sizeof_hdr and the magic written over it.
func (h *Header) encode() ([HeaderSize]byte, error) {
	raw := h.Raw
	le := binary.LittleEndian
	for _, f := range h.fields() {
		b := raw[f.off:]
		switch p := f.ptr.(type) {
		case *uint8:
			b[0] = *p
		case *int16:
			le.PutUint16(b, uint16(*p))
		case *float32:
			le.PutUint32(b, math.Float32bits(*p))
		case text:
			if len(*p.s) > p.n {
				return raw, &UnsupportedError{What: "header text", Value: *p.s,
					Detail: "longer than the " + strconv.Itoa(p.n) + " bytes its field holds"}
			}
			clear(b[:p.n])
			copy(b, *p.s)
		}
	}
	le.PutUint32(raw[0:], HeaderSize)
	copy(raw[344:], magicSingle)
	return raw, nil
}

// shape returns dim[1:dim[0]+1], the array's shape; the header must have
// been validated.
func (h *Header) shape() []int {
	s := make([]int, h.Dim[0])
	for i := range s {
		s[i] = int(h.Dim[i+1])
	}
	return s
}

// PixDim returns the voxel size along each axis of the volume,
// pixdim[1:dim[0]+1], as nibabel's header.get_zooms() does.
func (h *Header) PixDim() []float64 {
	rank := min(max(int(h.Dim[0]), 0), maxRank)
	z := make([]float64, rank)
	for i := range z {
		z[i] = float64(h.Pixdim[i+1])
	}
	return z
}

// Affine returns the 4×4 matrix that maps voxel indices (i, j, k, 1) to
// world coordinates, chosen as nibabel's get_best_affine does: the sform
// rows if sform_code ≠ 0, else the quaternion transform if qform_code ≠ 0,
// else nibabel's fallback from the shape and voxel sizes (x flipped,
// centred on the volume) — which is not NIfTI's "method 1" (plain
// scaling), but what nibabel, and hence users comparing with it, see.
//
// Where nibabel refuses a quaternion transform (voxel sizes pixdim[1..3]
// below zero, or qfac pixdim[0] neither 1 nor −1), Affine follows
// nifti1_io.c instead: a negative voxel size counts as 1 and qfac is −1
// when pixdim[0] < 0, else 1.
func (h *Header) Affine() [4][4]float64 {
	switch {
	case h.SformCode != 0:
		return h.sformAffine()
	case h.QformCode != 0:
		return h.qformAffine()
	}
	return h.baseAffine()
}

func (h *Header) sformAffine() [4][4]float64 {
	var a [4][4]float64
	for r := range h.SRow {
		for c := range h.SRow[r] {
			a[r][c] = float64(h.SRow[r][c])
		}
	}
	a[3][3] = 1
	return a
}

// qformAffine is nibabel's get_qform: the rotation of the unit quaternion
// (a, b, c, d) with a = √(1 − b² − c² − d²) (0 when that is negative),
// times diag(pixdim[1], pixdim[2], qfac·pixdim[3]), then the offsets.
func (h *Header) qformAffine() [4][4]float64 {
	b, c, d := float64(h.QuaternB), float64(h.QuaternC), float64(h.QuaternD)
	a := 0.0
	if w2 := 1 - (b*b + c*c + d*d); w2 > 0 {
		a = math.Sqrt(w2)
	}
	rot := quaternionMatrix(a, b, c, d)
	var scale [3]float64
	for i := range scale {
		scale[i] = float64(h.Pixdim[i+1])
		if scale[i] < 0 {
			scale[i] = 1
		}
	}
	if h.Pixdim[0] < 0 {
		scale[2] = -scale[2]
	}
	var m [4][4]float64
	for r := range 3 {
		for col := range 3 {
			m[r][col] = rot[r][col] * scale[col]
		}
		m[r][3] = float64(h.QOffset[r])
	}
	m[3][3] = 1
	return m
}

// quaternionMatrix is the rotation matrix of the quaternion w + xi + yj +
// zk, normalised by its squared norm so that it need not be a unit one
// (nibabel's quat2mat); the identity when the norm is below float64's
// epsilon.
func quaternionMatrix(w, x, y, z float64) [3][3]float64 {
	n := w*w + x*x + y*y + z*z
	if n < 0x1p-52 {
		return [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	}
	s := 2 / n
	X, Y, Z := x*s, y*s, z*s
	wX, wY, wZ := w*X, w*Y, w*Z
	xX, xY, xZ := x*X, x*Y, x*Z
	yY, yZ, zZ := y*Y, y*Z, z*Z
	return [3][3]float64{
		{1 - (yY + zZ), xY - wZ, xZ + wY},
		{xY + wZ, 1 - (xX + zZ), yZ - wX},
		{xZ - wY, yZ + wX, 1 - (xX + yY)},
	}
}

// baseAffine is nibabel's get_base_affine (shape_zoom_affine with x
// flipped): the first three axes (padded with extent 1 and size 1),
// scaled by their voxel sizes with x negated, and translated so that the
// volume's centre is at the origin.
func (h *Header) baseAffine() [4][4]float64 {
	rank := min(max(int(h.Dim[0]), 0), maxRank)
	var m [4][4]float64
	for i := range 3 {
		extent, size := 1.0, 1.0
		if i < rank {
			extent, size = float64(h.Dim[i+1]), float64(h.Pixdim[i+1])
		}
		if i == 0 {
			size = -size
		}
		m[i][i] = size
		m[i][3] = -((extent - 1) / 2) * size
	}
	m[3][3] = 1
	return m
}
