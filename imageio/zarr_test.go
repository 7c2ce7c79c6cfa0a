package imageio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

func TestZarrPath(t *testing.T) {
	for _, c := range []struct{ in, root, inner string }{
		{"a/x.zarr", "a/x.zarr", ""},
		{"x.zarr/", "x.zarr", ""},
		{"/d/x.ZARR/g/arr", "/d/x.ZARR", "g/arr"},
		{"x.zarr/0", "x.zarr", "0"},
	} {
		root, inner, ok := zarrPath(c.in)
		if !ok || root != c.root || inner != c.inner {
			t.Errorf("zarrPath(%q) = %q, %q, %v; want %q, %q", c.in, root, inner, ok, c.root, c.inner)
		}
	}
	for _, p := range []string{"x.npy", ".zarr", "a/.zarr/b", "zarr"} {
		if _, _, ok := zarrPath(p); ok {
			t.Errorf("zarrPath(%q) found a Zarr array", p)
		}
	}
}

// TestZarrFile writes and reads arrays as .zarr through WriteFile and
// ReadFile: a new array is Zarr v3 with shards; a Zarr input's layout and
// OME-Zarr level go to the output; a chunk file inside a store is no
// input.
func TestZarrFile(t *testing.T) {
	dir := t.TempDir()
	a, _ := nd.New(nd.Float32, 5, 9, 4)
	for i := range a.Data.([]float32) {
		a.Data.([]float32)[i] = float32(i%17) - 3
	}
	out := filepath.Join(dir, "out.zarr", "g", "arr")
	if err := CheckWritable(out); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(out, a, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b, meta, err := ReadFile(out, RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !slices.Equal(a.Shape, b.Shape) || b.DType() != nd.Float32 {
		t.Fatal("read back differs")
	}
	if meta.Zarr == nil || meta.Zarr.Array.Format != 3 || meta.Zarr.Array.ShardShape == nil {
		t.Fatalf("metadata %+v; want v3, sharded", meta.Zarr)
	}
	if h, ok := ReadHeader(out, RawOptions{}); !ok || !slices.Equal(h.Shape, a.Shape) || h.DType != nd.Float32 {
		t.Errorf("ReadHeader = %+v, %v", h, ok)
	}
	if !knownInput(filepath.Join(dir, "out.zarr", "g", "arr")) || knownInput(filepath.Join(dir, "out.zarr", "g", "arr", "zarr.json")) {
		t.Error("a store's files are taken for arrays")
	}

	// An OME-Zarr v2 level in: a v2 OME-Zarr out, with the level's
	// scale and translation and the input's chunks.
	ctx := context.Background()
	in := filepath.Join(dir, "in.zarr")
	s := zarr.NewDirStore(in)
	arr, err := zarr.Create(ctx, s, "1", zarr.Meta{Format: 2, Shape: a.Shape, DType: nd.Float32, ChunkShape: []int{2, 3, 4}, Compressor: zarr.Compressor{Name: "gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := arr.WriteRegion(ctx, []int{0, 0, 0}, a); err != nil {
		t.Fatal(err)
	}
	ms := zarr.Multiscale{Axes: []zarr.Axis{{Name: "z", Type: "space"}, {Name: "y", Type: "space"}, {Name: "x", Type: "space"}},
		Datasets: []zarr.Dataset{{Path: "0", Scale: []float64{1, 1, 1}}, {Path: "1", Scale: []float64{2, 3, 4}, Translation: []float64{0.5, 1, 1.5}}}}
	if err := zarr.WriteMultiscale(ctx, s, "", 2, ms); err != nil {
		t.Fatal(err)
	}
	b, meta, err = ReadFile(in+"/1", RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.Zarr == nil || meta.Zarr.Level == nil || !slices.Equal(meta.Zarr.Level.Datasets[0].Scale, []float64{2, 3, 4}) {
		t.Fatalf("OME level not read: %+v", meta.Zarr)
	}
	out2 := filepath.Join(dir, "ome.zarr")
	if err := WriteFile(out2, b, WriteOptions{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	got, err := zarr.ReadMultiscales(ctx, zarr.NewDirStore(out2), "")
	if err != nil || len(got) != 1 || got[0].Version != "0.4" || len(got[0].Datasets) != 1 || got[0].Datasets[0].Path != "0" ||
		!slices.Equal(got[0].Datasets[0].Translation, []float64{0.5, 1, 1.5}) || got[0].Axes[2].Name != "x" {
		t.Fatalf("output multiscales %+v, %v", got, err)
	}
	c, meta2, err := ReadFile(out2, RawOptions{}) // the group opens its level
	if err != nil || !bytes.Equal(c.Bytes(), a.Bytes()) {
		t.Fatalf("reading the output group: %v", err)
	}
	if m := meta2.Zarr.Array; m.Format != 2 || !slices.Equal(m.ChunkShape, []int{2, 3, 4}) || m.Compressor.Name != "gzip" {
		t.Errorf("output layout %+v; want the input's", m)
	}
	if _, err := os.Stat(filepath.Join(out2, "0", ".zarray")); err != nil {
		t.Error(err)
	}
	// A planar bank's output of that level, one axis more, first: an
	// OME-Zarr level with a channel axis "c" first, scale 1 and
	// translation 0 on it; interleaved (or not marked), no level.
	bank, _ := nd.New(nd.Float32, 2, 5, 9, 4)
	out3 := filepath.Join(dir, "bank.zarr")
	if err := WriteFile(out3, bank, WriteOptions{Meta: meta, BankFirst: true}); err != nil {
		t.Fatal(err)
	}
	got, err = zarr.ReadMultiscales(ctx, zarr.NewDirStore(out3), "")
	if err != nil || len(got) != 1 || len(got[0].Axes) != 4 || got[0].Axes[0] != (zarr.Axis{Name: "c", Type: "channel"}) || got[0].Axes[1].Name != "z" ||
		!slices.Equal(got[0].Datasets[0].Scale, []float64{1, 2, 3, 4}) || !slices.Equal(got[0].Datasets[0].Translation, []float64{0, 0.5, 1, 1.5}) {
		t.Fatalf("a planar bank's multiscales %+v, %v", got, err)
	}
	if c, _, err := ReadFile(out3, RawOptions{}); err != nil || !slices.Equal(c.Shape, bank.Shape) {
		t.Fatalf("reading the bank's group: %v", err)
	}
	out4 := filepath.Join(dir, "bank-last.zarr")
	if err := WriteFile(out4, bank, WriteOptions{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	if got, err := zarr.ReadMultiscales(ctx, zarr.NewDirStore(out4), ""); err != nil || len(got) != 0 {
		t.Errorf("a bank not marked first: multiscales %+v, %v; want none", got, err)
	}
	if _, _, err := Decode("x.zarr", bytes.NewReader(nil)); err == nil {
		t.Error("Decode of a .zarr succeeded")
	}
}

func knownInput(path string) bool { return CheckDType(path, nd.Uint8) == nil }

// TestZarrBlosclzInput writes a Zarr input compressed with blosclz, which
// is read but not written, with lz4 instead.
func TestZarrBlosclzInput(t *testing.T) {
	in := filepath.Join("..", "zarr", "testdata", "v2", "blosc_blosclz_shuffle.zarr")
	a, meta, err := ReadFile(in, RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.zarr")
	if err := WriteFile(out, a, WriteOptions{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	b, meta2, err := ReadFile(out, RawOptions{})
	if err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("read back: %v", err)
	}
	if c := meta2.Zarr.Array.Compressor; c.Name != "blosc" || c.BloscName != "lz4" || c.Shuffle != zarr.ByteShuffle {
		t.Errorf("compressor %+v; want blosc lz4 with byte shuffle", c)
	}
}

// TestCreateZarrResumeAtOnce creates one resumed output from 16 goroutines
// at once, as the tasks of an array job do, each storing a shard as soon
// as its CreateZarr returns: none may remove what another created (its
// metadata or its shard), and every one must open the array.
func TestCreateZarrResumeAtOnce(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "out.zarr")
		shape := []int{64, 64}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 16 {
			wg.Go(func() {
				opt := WriteOptions{Meta: Meta{Zarr: &ZarrMeta{Array: zarr.Meta{Shape: shape, DType: nd.Uint8, ChunkShape: []int{4, 64},
					Compressor: zarr.Compressor{Name: "zstd"}}}}}
				a, err := CreateZarr(context.Background(), path, shape, nd.Uint8, opt, true)
				if err != nil {
					errs <- err
					return
				}
				tile, _ := nd.New(nd.Uint8, 4, 64)
				tile.Bytes()[0] = 1 // not the fill value: stored
				errs <- a.WriteRegion(context.Background(), []int{4 * i, 0}, tile)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		a, err := zarr.Open(context.Background(), zarr.NewDirStore(path), "")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, _ := a.ReadAll(context.Background())
		for i := range 16 {
			if got.Bytes()[4*i*64] != 1 {
				t.Fatalf("round %d: the shard task %d stored is gone", round, i)
			}
		}
	}
}
