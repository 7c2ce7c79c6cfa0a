package zarr_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// A sharded Zarr v3 array in a directory: written shard by shard, then
// one chunk-sized box of it read back.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "zarr-example")
	defer os.RemoveAll(dir)
	store := zarr.NewDirStore(filepath.Join(dir, "volume.zarr"))

	a, err := zarr.Create(ctx, store, "raw", zarr.Meta{
		Shape: []int{4, 6}, DType: nd.Uint16,
		ChunkShape: []int{2, 3}, ShardShape: []int{4, 6},
		Compressor: zarr.Compressor{Name: "zstd"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data := make([]uint16, 24)
	for i := range data {
		data[i] = uint16(i)
	}
	src, _ := nd.FromSlice(data, 4, 6)
	if err := a.WriteRegion(ctx, []int{0, 0}, src); err != nil {
		fmt.Println(err)
		return
	}

	b, err := zarr.Open(ctx, store, "raw")
	if err != nil {
		fmt.Println(err)
		return
	}
	box, _ := nd.New(nd.Uint16, 2, 3)
	if err := b.ReadRegion(ctx, []int{1, 2}, []int{2, 3}, box); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Shape(), b.DType(), b.ChunkShape(), b.ShardShape(), box.Data)
	// Output: [4 6] uint16 [2 3] [4 6] [8 9 10 14 15 16]
}
