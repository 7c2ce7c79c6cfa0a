package imageio

import (
	"bytes"
	"errors"
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
