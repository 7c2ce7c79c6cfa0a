package zarr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// fixture is one array of testdata/manifest.json: written by zarr-python
// 2 (v2) or by testdata/gen.py from the v3 spec, with the .npy of what it
// holds.
type fixture struct {
	Name   string `json:"name"`
	Root   string `json:"root"`
	Path   string `json:"path"`
	NPY    string `json:"npy"`
	Format int    `json:"format"`
}

// testdata/ts/manifest.json, where present, lists the arrays tensorstore
// wrote (testdata/device.py, run on the device machine).
func fixtures(t testing.TB) []fixture {
	var all []fixture
	for _, name := range []string{"testdata/manifest.json", "testdata/ts/manifest.json"} {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) && name != "testdata/manifest.json" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var fs []fixture
		if err := json.Unmarshal(b, &fs); err != nil {
			t.Fatal(err)
		}
		all = append(all, fs...)
	}
	return all
}

func readNPY(t testing.TB, path string) nd.Array {
	a, _, err := imageio.ReadFile(filepath.Join("testdata", path), imageio.RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sameBits reports whether two arrays hold the same elements bit for bit
// (NaNs included).
func sameBits(a, b nd.Array) bool {
	return a.DType() == b.DType() && len(a.Shape) == len(b.Shape) && a.Len() == b.Len() &&
		bytes.Equal(a.Bytes(), b.Bytes()) && equalInts(a.Shape, b.Shape)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFixtures reads every fixture whole and compares it with its .npy.
func TestFixtures(t *testing.T) {
	ctx := context.Background()
	for _, f := range fixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			want := readNPY(t, f.NPY)
			if want.DType() == nd.Unspecified {
				t.Fatalf("%s: no dtype", f.NPY)
			}
			a, err := zarr.Open(ctx, zarr.NewDirStore(filepath.Join("testdata", f.Root)), f.Path)
			if err != nil {
				t.Fatal(err)
			}
			if a.Meta().Format != f.Format {
				t.Errorf("format %d, want %d", a.Meta().Format, f.Format)
			}
			got, err := a.ReadAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Shape) == 1 && want.Shape[0] == 1 && len(got.Shape) == 0 {
				want.Shape = nil // imageio reads a 0-d .npy as one element
			}
			if !sameBits(got, want) {
				t.Fatalf("read %v %v, want %v %v\n got %v\nwant %v", got.Shape, got.DType(), want.Shape, want.DType(), got.Data, want.Data)
			}
		})
	}
}
