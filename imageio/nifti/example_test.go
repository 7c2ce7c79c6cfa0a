package nifti_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ndconv/ndconv/imageio/nifti"
	"github.com/ndconv/ndconv/nd"
)

// A volume is read in nibabel's axis order with its header, processed, and
// written with the same header, so that it keeps its geometry.
func Example() {
	a, h, err := nifti.ReadFile("testdata/nibabel/i32_4d.nii.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shape", a.Shape, a.DType(), "voxel size", h.PixDim())
	fmt.Println("affine row 0", h.Affine()[0])

	// Stand-in for a filter: the same shape as float32.
	out, _ := nd.New(nd.Float32, a.Shape...)
	nd.Store(out.Data, 0, 1, a.Float64s())

	path := filepath.Join(os.TempDir(), "example-out.nii.gz")
	defer os.Remove(path)
	if err := nifti.WriteFile(path, out, h); err != nil {
		fmt.Println(err)
		return
	}
	_, h2, _ := nifti.ReadFile(path)
	fmt.Println("written", h2.Datatype == 16, "same affine", h2.Affine() == h.Affine())
	// Output:
	// shape [3 4 2 2] int32 voxel size [2 2 2 0.75]
	// affine row 0 [-2 0 0 90]
	// written true same affine true
}
