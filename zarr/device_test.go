package zarr_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// deviceArrays are v3 arrays this package writes for another
// implementation (tensorstore, run once on the device machine by
// testdata/device.py) to read back.
var deviceArrays = []struct {
	name, path string
	meta       zarr.Meta
}{
	{"ours_shard_zstd", "", zarr.Meta{Shape: []int{20, 18, 16}, DType: nd.Uint16, ChunkShape: []int{4, 4, 4}, ShardShape: []int{8, 8, 8},
		Compressor: zarr.Compressor{Name: "zstd"}, FillValue: 7}},
	{"ours_shard_blosc_be_F", "", zarr.Meta{Shape: []int{17, 19}, DType: nd.Float32, ChunkShape: []int{4, 6}, ShardShape: []int{8, 12},
		Compressor: zarr.Compressor{Name: "blosc", BloscName: "lz4", Shuffle: zarr.BitShuffle}, BigEndian: true, FortranOrder: true, FillValue: math.NaN()}},
	{"ours_gzip_crc_dot", "", zarr.Meta{Shape: []int{9, 10, 11}, DType: nd.Int64, ChunkShape: []int{4, 5, 6},
		Compressor: zarr.Compressor{Name: "gzip"}, Checksum: true, Separator: ".", FillValue: -3}},
	{"ours_complex_blosc_zstd", "", zarr.Meta{Shape: []int{6, 7}, DType: nd.Complex128, ChunkShape: []int{4, 4},
		Compressor: zarr.Compressor{Name: "blosc", BloscName: "zstd"}}},
	{"ours_f16_shard", "", zarr.Meta{Shape: []int{10, 10}, DType: nd.Float16, ChunkShape: []int{5, 5}, ShardShape: []int{10, 10},
		Compressor: zarr.Compressor{Name: "zstd", Level: 5}, FillValue: math.Inf(-1)}},
	{"ours_nested_int8", "g/h/arr", zarr.Meta{Shape: []int{33}, DType: nd.Int8, ChunkShape: []int{8}, ShardShape: []int{16},
		Compressor: zarr.Compressor{Name: "blosc", BloscName: "lz4hc", Shuffle: zarr.BitShuffle}, FillValue: 1}},
}

// TestWriteForDevice writes deviceArrays, with the .npy of each, under
// $ZARR_DEVICE_DIR (skipped without it).
func TestWriteForDevice(t *testing.T) {
	dir := os.Getenv("ZARR_DEVICE_DIR")
	if dir == "" {
		t.Skip("ZARR_DEVICE_DIR not set")
	}
	ctx := context.Background()
	var manifest []fixture
	for i, d := range deviceArrays {
		root := d.name + ".zarr"
		os.RemoveAll(filepath.Join(dir, root))
		a, err := zarr.Create(ctx, zarr.NewDirStore(filepath.Join(dir, root)), d.path, d.meta)
		if err != nil {
			t.Fatal(err)
		}
		want := randomArray(t, rand.New(rand.NewPCG(uint64(i), 7)), d.meta.DType, d.meta.Shape, d.meta.FillValue)
		if err := a.WriteRegion(ctx, make([]int, len(d.meta.Shape)), want); err != nil {
			t.Fatal(err)
		}
		if err := imageio.WriteFile(filepath.Join(dir, d.name+".npy"), want, imageio.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		manifest = append(manifest, fixture{Name: d.name, Root: root, Path: d.path, NPY: d.name + ".npy", Format: 3})
	}
	b, _ := json.MarshalIndent(manifest, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
