package imageio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// ZarrMeta is what a Zarr input says beyond its samples, carried to a
// Zarr output: its layout and codecs, and the OME-Zarr level it is.
type ZarrMeta struct {
	// Array is the input array's metadata.
	Array zarr.Meta
	// Level, when not nil, is the OME-Zarr multiscale the array is a level
	// of, with that one dataset.
	Level *zarr.Multiscale
}

// zarrPath splits a path that names a Zarr array, "dir/x.zarr" or
// "dir/x.zarr/group/array", into the store's directory and the array's
// path in it. ok is false for paths with no component ending in .zarr.
// For a bucket URL ("s3://bucket/dir/x.zarr/group?endpoint=…") root is
// the store's URL, its query kept ("s3://bucket/dir/x.zarr?endpoint=…").
func zarrPath(path string) (root, inner string, ok bool) {
	if blobstore.IsURL(path) {
		bu, p, err := blobstore.SplitURL(path)
		if err != nil {
			return "", "", false
		}
		r, inner, ok := zarrPath(p)
		if !ok {
			return "", "", false
		}
		u := *bu
		u.Path = "/" + strings.TrimLeft(filepath.ToSlash(r), "/")
		return u.String(), inner, true
	}
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i, p := range parts {
		if len(p) > len(".zarr") && strings.HasSuffix(strings.ToLower(p), ".zarr") {
			root = filepath.FromSlash(strings.Join(parts[:i+1], "/"))
			if root == "" {
				root = "/"
			}
			return root, strings.Trim(strings.Join(parts[i+1:], "/"), "/"), true
		}
	}
	return "", "", false
}

// zarrFormat reads and writes Zarr arrays: directories, not streams.
var zarrFormat = format{extensions: []string{".zarr"}, complex: true, readPath: readZarr, writePath: writeZarr}

// readZarr reads the whole array at path, with its layout and OME-Zarr
// level.
func readZarr(ctx context.Context, path string) (_ nd.Array, _ Meta, err error) {
	root, inner, _ := zarrPath(path)
	if !blobstore.IsURL(root) {
		if fi, err := os.Stat(root); err != nil {
			return nd.Array{}, Meta{}, err
		} else if !fi.IsDir() {
			return nd.Array{}, Meta{}, &FormatError{Format: ".zarr", Msg: root + " is not a directory"}
		}
	}
	s, done, err := openZarrStore(ctx, root)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	defer func() { err = errors.Join(err, done()) }()
	a, err := zarr.Open(ctx, s, inner)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	data, err := a.ReadAll(ctx)
	if err != nil {
		return nd.Array{}, Meta{}, err
	}
	zm := &ZarrMeta{Array: a.Meta()}
	if ms, ok, err := zarr.LevelOf(ctx, s, a.Path()); err == nil && ok {
		zm.Level = &ms
	}
	return data, Meta{Zarr: zm}, nil
}

// ZarrLayout is the metadata CreateZarr gives an output array of shape
// and dt whose input's metadata is meta (zarrLayout), so that a caller can
// align its blocks with the shards before the array is created.
func ZarrLayout(shape []int, dt nd.DType, meta Meta) zarr.Meta {
	return zarrLayout(shape, dt, meta.Zarr)
}

// zarrLayout is the metadata of an output array a: the input's layout
// where the input was Zarr of the same rank, else Zarr v3 with shards of
// about 64 MiB of 1 MiB chunks, zstd-compressed.
func zarrLayout(shape []int, dt nd.DType, in *ZarrMeta) zarr.Meta {
	rank := len(shape)
	if in != nil && len(in.Array.Shape) == rank {
		m := in.Array
		m.Shape, m.DType = slices.Clone(shape), dt
		if in.Array.DType != dt {
			m.FillValue = 0
		}
		if m.Compressor.Name == "blosc" && m.Compressor.BloscName == "blosclz" {
			m.Compressor.BloscName = "lz4" // blosclz is read, not written
		}
		return m
	}
	chunk := zarr.DefaultChunkShape(shape, dt)
	shard := slices.Clone(chunk)
	// Grow the shard by whole chunks, slowest axis first, up to 64 chunks
	// and no further than the array.
	for n, grew := 1, true; grew; {
		grew = false
		for d := range shard {
			if shard[d] < shape[d] && n*2 <= 64 {
				shard[d] += shard[d]
				n *= 2
				grew = true
			}
		}
	}
	return zarr.Meta{Shape: slices.Clone(shape), DType: dt, ChunkShape: chunk, ShardShape: shard,
		Compressor: zarr.Compressor{Name: "zstd"}}
}

// writeZarr writes a as the Zarr array path names, replacing what is
// there (createZarr). Each shard is written whole and atomically; the
// array as a whole is not (its old contents are removed first).
func writeZarr(ctx context.Context, path string, a nd.Array, opt WriteOptions) (err error) {
	root, inner, _ := zarrPath(path)
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() && !blobstore.IsURL(root) {
		return &FormatError{Format: ".zarr", Msg: root + " exists and is not a directory"}
	}
	s, done, err := openZarrStore(ctx, root)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, done()) }()
	arr, err := createZarr(ctx, s, inner, a.Shape, a.DType(), opt.Meta.Zarr, opt.BankFirst, false)
	if err != nil {
		return err
	}
	return arr.WriteRegion(ctx, make([]int, len(a.Shape)), a)
}

// parent is the path of the group above a path in a store.
func parent(inner string) string {
	if i := strings.LastIndex(inner, "/"); i >= 0 {
		return inner[:i]
	}
	return ""
}

// openZarrStore opens the store of a Zarr root: a bucket for a URL (see
// package blobstore), else a directory. done releases it.
func openZarrStore(ctx context.Context, root string) (s zarr.Store, done func() error, err error) {
	if blobstore.IsURL(root) {
		bs, err := blobstore.Open(ctx, root, nil)
		if err != nil {
			return nil, nil, err
		}
		return bs, bs.Close, nil
	}
	return zarr.NewDirStore(root), func() error { return nil }, nil
}

// zarrHeader reads a Zarr array's shape and dtype from its metadata.
func zarrHeader(path string) (Header, bool) {
	root, inner, _ := zarrPath(path)
	s, done, err := openZarrStore(context.Background(), root)
	if err != nil {
		return Header{}, false
	}
	defer done()
	a, err := zarr.Open(context.Background(), s, inner)
	if err != nil {
		return Header{}, false
	}
	return Header{Shape: a.Shape(), DType: a.DType()}, true
}

// checkZarrWritable checks that the directory a Zarr store would be made
// in exists.
func checkZarrWritable(path string) error {
	root, _, _ := zarrPath(path)
	if blobstore.IsURL(root) {
		// A bucket: its URL must parse and its driver open (no request is
		// made); a file:// URL's folder must exist.
		s, err := blobstore.Open(context.Background(), root, nil)
		if err != nil {
			return fmt.Errorf("output %s: %w", path, err)
		}
		return s.Close()
	}
	if fi, err := os.Stat(root); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("output %s: %s exists and is not a directory", path, root)
		}
		return nil
	}
	return checkOutputDir(path, filepath.Dir(root))
}
