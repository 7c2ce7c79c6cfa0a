package imageio

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestReadHeader: a .npy's header and a .raw's options give the shape and
// dtype ReadFile returns (also for Fortran order and big-endian data); a
// truncated file, a .raw of the wrong size and formats without a separate
// header report false.
func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	a, _ := nd.New(nd.Int16, 3, 5, 2)
	path := filepath.Join(dir, "a.npy")
	if err := WriteNPYFile(path, a); err != nil {
		t.Fatal(err)
	}
	check := func(name string, raw RawOptions) {
		t.Helper()
		h, ok := ReadHeader(filepath.Join(dir, name), raw)
		got, _, err := ReadFile(filepath.Join(dir, name), raw)
		if !ok || err != nil || !slices.Equal(h.Shape, got.Shape) || h.DType != got.DType() {
			t.Errorf("%s: header %+v, %v; ReadFile %v %v, %v", name, h, ok, got.Shape, got.DType(), err)
		}
	}
	check("a.npy", RawOptions{})
	b, _ := os.ReadFile(path)
	// The same array, declared big-endian Fortran order: the header keeps
	// shape and dtype.
	fortran := bytes.Clone(b)
	for _, swap := range [][2]string{{"'<i2'", "'>i2'"}, {"'fortran_order': False", "'fortran_order': True "}} {
		i := bytes.Index(fortran, []byte(swap[0]))
		if i < 0 {
			t.Fatalf("no %s in the header", swap[0])
		}
		copy(fortran[i:], swap[1])
	}
	os.WriteFile(filepath.Join(dir, "f.npy"), fortran, 0o644)
	check("f.npy", RawOptions{})
	os.WriteFile(filepath.Join(dir, "a.raw"), make([]byte, 60), 0o644)
	check("a.raw", RawOptions{Shape: []int{3, 10}, DType: nd.Uint16})

	os.WriteFile(filepath.Join(dir, "short.npy"), b[:len(b)-1], 0o644)
	for name, raw := range map[string]RawOptions{
		"short.npy": {}, "a.raw": {Shape: []int{3, 11}, DType: nd.Uint16}, "missing.npy": {},
	} {
		if h, ok := ReadHeader(filepath.Join(dir, name), raw); ok {
			t.Errorf("%s: header %+v", name, h)
		}
	}
	png := filepath.Join(dir, "a.png")
	img, _ := nd.New(nd.Uint8, 4, 4)
	if err := WriteFile(png, img, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ReadHeader(png, RawOptions{}); ok {
		t.Error("a PNG's header was read apart from its data")
	}
}
