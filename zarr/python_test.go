package zarr_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/zarr"
)

// python is Debian's interpreter, where python3-zarr installs.
const python = "/usr/bin/python3"

// TestPythonReadsOurV2 has zarr-python 2 read the v2 arrays this package
// writes (every dtype, every codec, C and F order, both byte orders, fill
// values, missing chunks) and compare them with .npy files. It skips
// where python3-zarr is not installed.
func TestPythonReadsOurV2(t *testing.T) {
	if err := exec.Command(python, "-c", "import zarr, numcodecs").Run(); err != nil {
		t.Skipf("no zarr-python 2 (apt-get install python3-zarr python3-numcodecs): %v", err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	var pairs []string
	n := cases(40)
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 2))
		dt := allDTypes[i%len(allDTypes)]
		rank := 1 + r.IntN(3)
		shape := randomShape(r, rank, []int{0, 30, 9, 6}[rank])
		m := randomMeta(r, dt, shape)
		m.Format, m.ShardShape, m.Checksum = 2, nil, false
		root := filepath.Join(dir, fmt.Sprintf("a%d.zarr", i))
		a, err := zarr.Create(ctx, zarr.NewDirStore(root), "", m)
		if err != nil {
			t.Fatal(err)
		}
		want := randomArray(t, r, dt, shape, m.FillValue)
		if err := a.WriteRegion(ctx, make([]int, rank), want); err != nil {
			t.Fatal(err)
		}
		npy := filepath.Join(dir, fmt.Sprintf("a%d.npy", i))
		if err := imageio.WriteFile(npy, want, imageio.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, fmt.Sprintf("(%q, %q, %q)", root, npy, fmt.Sprintf("%v %v %+v big=%v F=%v fill=%v", dt, shape, m.Compressor, m.BigEndian, m.FortranOrder, m.FillValue)))
	}
	script := `
import sys, numpy as np, zarr
bad = 0
for root, npy, what in [` + strings.Join(pairs, ", ") + `]:
    z = zarr.open_array(root, mode='r')
    got, want = z[...], np.load(npy)
    if got.dtype.newbyteorder('=') != want.dtype or got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        print('MISMATCH', root, what, got.dtype, want.dtype)
        bad += 1
sys.exit(1 if bad else 0)
`
	out, err := exec.Command(python, "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("zarr-python: %v\n%s", err, out)
	}
	t.Logf("zarr-python 2 read %d arrays", n)
}
