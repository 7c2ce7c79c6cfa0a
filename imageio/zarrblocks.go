package imageio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// Zarr arrays read and written by regions, for volumes larger than
// memory: OpenZarr gives an array to read boxes of (zarr.Array.ReadRegion)
// with the Meta that ReadFile would give, CreateZarr makes the output
// array WriteFile would make, metadata first, for its shards to be
// written one region at a time (zarr.Array.WriteRegion).

// zarrStore is the store and the array's path in it for a path that
// names a Zarr array (x.zarr or x.zarr/group/array).
func zarrStore(path string) (zarr.Store, string, error) {
	root, inner, ok := zarrPath(path)
	if !ok {
		return nil, "", &FormatError{Format: ".zarr", Msg: path + " names no .zarr directory"}
	}
	if blobstore.IsURL(root) {
		// The bucket stays open for the array's life: a bucket store
		// holds no more than idle connections.
		s, err := blobstore.Open(context.Background(), root, nil)
		return s, inner, err
	}
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, "", &FormatError{Format: ".zarr", Msg: root + " exists and is not a directory"}
	}
	return zarr.NewDirStore(root), inner, nil
}

// IsZarr reports whether path names a Zarr array (a component ends in
// .zarr).
func IsZarr(path string) bool {
	_, _, ok := zarrPath(path)
	return ok
}

// OpenZarr opens the Zarr array at path for reading by regions, with the
// Meta ReadFile would give it (its layout and OME-Zarr level, carried to a
// Zarr output).
func OpenZarr(ctx context.Context, path string) (*zarr.Array, Meta, error) {
	root, _, _ := zarrPath(path)
	if fi, err := os.Stat(root); blobstore.IsURL(root) {
		// A bucket: zarr.Open below says when the array is not there.
	} else if err != nil {
		return nil, Meta{}, err
	} else if !fi.IsDir() {
		return nil, Meta{}, &FormatError{Format: ".zarr", Msg: root + " is not a directory"}
	}
	s, inner, err := zarrStore(path)
	if err != nil {
		return nil, Meta{}, err
	}
	a, err := zarr.Open(ctx, s, inner)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("read %s: %w", path, err)
	}
	zm := &ZarrMeta{Array: a.Meta()}
	if ms, ok, err := zarr.LevelOf(ctx, s, a.Path()); err == nil && ok {
		zm.Level = &ms
	}
	return a, Meta{Zarr: zm}, nil
}

// CreateZarr makes the Zarr array path names for an output of shape and
// dt with the layout WriteFile gives it (the input's, where opt.Meta
// carries a Zarr input's), and writes its metadata, and the OME-Zarr
// group's where the input was a level, before any data: an interrupted
// writer leaves an array whose metadata is whole and whose shards are
// each whole or absent (absent shards read as the fill value). What the
// path held is removed first, unless resume is true and an array of the
// same layout is there: that one is kept with its shards, so that a run
// resumed writes only the shards missing. An array of another layout is
// then an *ArgumentError.
func CreateZarr(ctx context.Context, path string, shape []int, dt nd.DType, opt WriteOptions, resume bool) (*zarr.Array, error) {
	s, inner, err := zarrStore(path)
	if err != nil {
		return nil, err
	}
	return createZarr(ctx, s, inner, shape, dt, opt.Meta.Zarr, opt.BankFirst, resume)
}

// OutputLevel is the OME-Zarr multiscale of an output of shape written
// from an input that was a level (in, whose Level has its one dataset),
// and false where the output is no level: the input's axes, scale and
// translation where the ranks agree, and a channel axis first for a
// planar bank's output (bankFirst, one axis more; zarr.WithChannelFirst).
func OutputLevel(in *ZarrMeta, shape []int, bankFirst bool) (zarr.Multiscale, bool) {
	if in == nil || in.Level == nil {
		return zarr.Multiscale{}, false
	}
	switch ms := *in.Level; {
	case len(ms.Axes) == len(shape):
		return ms, true
	case bankFirst && len(ms.Axes)+1 == len(shape):
		return ms.WithChannelFirst()
	}
	return zarr.Multiscale{}, false
}

// createZarr is CreateZarr in store s, at inner. An input that was an
// OME-Zarr level makes the output one too (OutputLevel): the array at "0"
// (or the path given) under a group, replaced whole, whose multiscale has
// that one level, with the input level's axes, scale and translation (a
// planar bank's channel axis first).
func createZarr(ctx context.Context, s zarr.Store, inner string, shape []int, dt nd.DType, level *ZarrMeta, bankFirst, resume bool) (*zarr.Array, error) {
	ms, ome := OutputLevel(level, shape, bankFirst)
	if ome && inner == "" {
		inner = "0"
	}
	m := zarrLayout(shape, dt, level)
	if resume {
		if arr, err := openLayout(ctx, s, inner, m); err == nil || !errors.Is(err, zarr.ErrNotFound) {
			return arr, err
		}
		// None there yet. Nothing is removed: the tasks of an array job
		// start at once, and removing what another has just created would
		// lose its metadata and shards. A task that finds the metadata
		// another wrote meanwhile opens it.
	} else {
		if err := zarr.Remove(ctx, s, inner); err != nil {
			return nil, err
		}
		if ome {
			// The group's old metadata goes too: it is rewritten below.
			if err := zarr.Remove(ctx, s, parent(inner)); err != nil {
				return nil, err
			}
		}
	}
	arr, err := zarr.Create(ctx, s, inner, m)
	if err != nil {
		if resume {
			if again, err2 := openLayout(ctx, s, inner, m); err2 == nil {
				return again, nil
			}
		}
		return nil, err
	}
	if ome {
		ds := ms.Datasets[0]
		ds.Path = inner[strings.LastIndex(inner, "/")+1:]
		ms.Datasets = []zarr.Dataset{ds}
		if err := zarr.WriteMultiscale(ctx, s, parent(inner), arr.Meta().Format, ms); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

// openLayout opens the array at inner for a resumed run writing m: an
// error wrapping zarr.ErrNotFound where there is none, an ArgumentError
// where its shape, dtype or shards differ from m's.
func openLayout(ctx context.Context, s zarr.Store, inner string, m zarr.Meta) (*zarr.Array, error) {
	arr, err := zarr.Open(ctx, s, inner)
	if err != nil {
		return nil, err
	}
	have := arr.Meta()
	if !slices.Equal(have.Shape, m.Shape) || have.DType != m.DType || !slices.Equal(arr.ShardShape(), ZarrShardShape(m)) {
		return nil, &nd.ArgumentError{Arg: "--resume", Msg: fmt.Sprintf("the array there is %v %v in shards of %v; this run writes %v %v in shards of %v: remove it, or run without --resume",
			have.DType, have.Shape, arr.ShardShape(), m.DType, m.Shape, ZarrShardShape(m))}
	}
	return arr, nil
}

// ZarrShardShape is the shape of what m stores under one key: its
// shards, or its chunks where it has none (the unit a block writes whole).
func ZarrShardShape(m zarr.Meta) []int {
	if m.ShardShape != nil {
		return slices.Clone(m.ShardShape)
	}
	return slices.Clone(m.ChunkShape)
}
