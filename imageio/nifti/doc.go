// Package nifti reads and writes NIfTI-1 volumes (.nii and .nii.gz) as
// ndconv arrays, keeping the header so that a filtered volume is written
// with its input's geometry.
//
// # Axis order
//
// An array read from a NIfTI file has nibabel's axis order: its shape is
// (dim[1], dim[2], …, dim[dim[0]]) and it is indexed [x, y, z, t, …], exactly
// as nibabel.load(f).get_fdata() is. The file stores its voxels in Fortran
// order (x fastest); Read transposes them into ndconv's C-order arrays and
// Write transposes back, so a filter along axis 0 is a filter along x, as
// scipy.ndimage applied to nibabel's array would do.
//
// # Element types
//
// Integer (8 to 64 bits, signed and unsigned), float32 and float64 voxels
// are read into arrays of that type, and written as it; float16 arrays,
// which NIfTI-1 has no type for, are refused. Complex, RGB, binary and
// float128 volumes are an *UnsupportedError that names the type.
//
// When the header's scl_slope is non-zero and finite and (scl_slope,
// scl_inter) is not (1, 0), the voxels are scaled on read, v·scl_slope +
// scl_inter computed in float64 as nibabel's get_fdata does, into float32
// (float64 for int32, uint32, int64, uint64 and float64 files, whose values
// float32 cannot hold). The returned Header then has scl_slope 1 and
// scl_inter 0, so that writing it does not scale again.
//
// # Reading untrusted files
//
// Read never trusts the header: dimensions, datatype and vox_offset are
// checked, the voxel count is compared, overflow-safe, with nd.MaxElements,
// and, when the size of the input is known (a file, an io.Seeker, or a
// reader with a Len method), with the bytes actually there — all before the
// volume is allocated. Gzipped or streamed data are read in chunks that grow
// only as data arrive, so a small file that claims a huge volume fails with
// a *FormatError after allocating about what it held. Bad input is reported
// as a *FormatError (not a valid NIfTI-1 file) or an *UnsupportedError (a
// valid file ndconv cannot represent: NIfTI-2, a .hdr/.img pair, a complex
// datatype), never a panic.
//
// # Writing
//
// Write produces a single-file NIfTI-1 ("n+1"), little-endian, vox_offset
// 352 and no extensions. The array decides dim, datatype, bitpix, scl_slope
// (1) and scl_inter (0), as nibabel writes an unscaled volume, and cal_min
// and cal_max (the range of its finite values); every other field, the
// geometry included, comes from the Header given. WriteFile gzips when the
// path ends in .gz and replaces the target atomically.
package nifti
