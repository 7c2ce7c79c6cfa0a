package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio/nifti"
	"github.com/ndconv/ndconv/nd"
)

// TestComplexFiles: complex arrays are written to and read from .npy and
// .raw unchanged; every other format refuses them with one line naming
// the dtype, before anything is written.
func TestComplexFiles(t *testing.T) {
	dir := t.TempDir()
	for _, a := range []nd.Array{
		{Shape: []int{2, 3}, Data: []complex64{1 + 2i, -3, 4i, 5.5 - 6.25i, 0, 7}},
		{Shape: []int{3, 2}, Data: []complex128{1 + 2i, -3, 4i, 5.5 - 6.25i, 1e300 - 1e-300i, 7}},
	} {
		dt := a.DType()
		for _, ext := range []string{".npy", ".raw"} {
			path := filepath.Join(dir, dt.String()+ext)
			if err := WriteFile(path, a, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			b, _, err := ReadFile(path, RawOptions{Shape: a.Shape, DType: dt})
			if err != nil || !sameArray(a, b) {
				t.Fatalf("%s: read back %v, %v", path, b, err)
			}
		}
		for _, ext := range []string{".png", ".jpg", ".tif", ".nii", ".nii.gz"} {
			path := filepath.Join(dir, "out"+ext)
			err := WriteFile(path, a, WriteOptions{})
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), dt.String()) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v", ext, err)
			}
			if CheckDType(path, dt) == nil {
				t.Errorf("CheckDType(%s, %v) accepts", ext, dt)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was left behind", path)
			}
		}
		// The format writers refuse them themselves too.
		var buf bytes.Buffer
		for name, err := range map[string]error{
			"WritePNG":    WritePNG(&buf, a),
			"WriteJPEG":   WriteJPEG(&buf, a, 0),
			"nifti.Write": nifti.Write(&buf, a, nil),
		} {
			if err == nil {
				t.Errorf("%s accepted %v", name, dt)
			}
		}
	}
}

// TestReadTextComplex: values written as Python writes complex numbers
// make a complex128 table, from the first value on; others stay float64.
func TestReadTextComplex(t *testing.T) {
	for text, want := range map[string]nd.Array{
		"1j, 2\n3, -4.5":    {Shape: []int{2, 2}, Data: []complex128{1i, 2, 3, -4.5}},
		"1 2 (3-2J) 0j":     {Shape: []int{4}, Data: []complex128{1, 2, 3 - 2i, 0}},
		"1e3+1e-3j,inf,nan": {Shape: []int{3}, Data: []complex128{1000 + 0.001i, complex(math.Inf(1), 0), complex(math.NaN(), 0)}},
		"1, 2\n3, 4":        {Shape: []int{2, 2}, Data: []float64{1, 2, 3, 4}},
	} {
		got, err := ReadText(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got.DType() != want.DType() || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || fmt.Sprint(got.Data) != fmt.Sprint(want.Data) {
			t.Errorf("%q: %v %v %v, want %v %v %v", text, got.DType(), got.Shape, got.Data, want.DType(), want.Shape, want.Data)
		}
	}
	for _, bad := range []string{"1+", "j", "1 + 2j", "(1+2j"} {
		if _, err := ReadText(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
