package imageio

import (
	"os"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Header is what an input file says about its array before its data.
type Header struct {
	Shape []int
	DType nd.DType
}

// ReadHeader reads only the header of a .npy file or the metadata of a
// Zarr array, or takes a .raw file's shape and dtype from raw, and checks
// them against the file's size: what a
// caller needs to prepare work on the array while ReadFile reads it (the
// array ReadFile returns has this shape and dtype). It reports false for
// other formats, whose headers are not read apart from their data, and for
// any problem, which ReadFile then reports.
func ReadHeader(path string, raw RawOptions) (Header, bool) {
	f, err := formatOf(path)
	if err != nil {
		return Header{}, false
	}
	if f.readPath != nil {
		return zarrHeader(path)
	}
	file, err := os.Open(path)
	if err != nil {
		return Header{}, false
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return Header{}, false
	}
	switch f.extensions[0] {
	case ".npy":
		remain := fi.Size()
		h, err := readNPYHeader(file, &remain, true)
		if err != nil || h.nbytes > remain {
			return Header{}, false
		}
		return Header{Shape: h.shape, DType: h.dtype}, true
	case ".raw":
		n, err := nd.ShapeElements(raw.Shape)
		if len(raw.Shape) == 0 || !raw.DType.Valid() || err != nil || fi.Size() != int64(n)*int64(raw.DType.Size()) {
			return Header{}, false
		}
		return Header{Shape: slices.Clone(raw.Shape), DType: raw.DType}, true
	}
	return Header{}, false
}
