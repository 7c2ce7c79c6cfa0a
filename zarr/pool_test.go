package zarr

import (
	"bytes"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// plainStore hides a DirStore's type, so that reads and writes through it
// take no buffer from the pool: the reference the pooled path is checked
// against.
type plainStore struct{ Store }

// TestPooledBuffersSameBytes writes and reads arrays of every layout the
// pool's paths meet (chunks decoded straight into the region read, read
// into pooled buffers, encoded into pooled buffers; chunks cut by the
// array's edge; codecs that return their input) through a DirStore, with
// every buffer given back to the pool overwritten at once, and checks the
// files against those written without the pool and the values read
// against those written: a buffer given back while still read shows.
func TestPooledBuffersSameBytes(t *testing.T) {
	poisonReleased = true
	defer func() { poisonReleased = false }()
	ctx := context.Background()
	shape := []int{20, 24, 13}
	for _, c := range []struct {
		name string
		m    Meta
	}{
		{"v2 zstd", Meta{Format: 2, Compressor: Compressor{Name: "zstd", Level: 1}}},
		{"v2 raw", Meta{Format: 2}},
		{"v2 zstd F big-endian", Meta{Format: 2, Compressor: Compressor{Name: "zstd"}, FortranOrder: true, BigEndian: true}},
		{"v2 gzip", Meta{Format: 2, Compressor: Compressor{Name: "gzip"}}},
		{"v3 zstd crc32c big-endian", Meta{Compressor: Compressor{Name: "zstd"}, Checksum: true, BigEndian: true}},
		{"v3 sharded zstd", Meta{Compressor: Compressor{Name: "zstd"}, ShardShape: []int{16, 16, 16}}},
		{"v3 sharded raw", Meta{ShardShape: []int{16, 16, 16}}}, // encoded chunks are their copies' memory
		{"v3 sharded zstd crc32c", Meta{Compressor: Compressor{Name: "zstd"}, Checksum: true, ShardShape: []int{16, 16, 16}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			m.Shape, m.DType, m.ChunkShape = shape, nd.Float32, []int{8, 8, 8}
			src, _ := nd.New(nd.Float32, shape...)
			r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
			for i, v := range src.Bytes() {
				// Runs of repeats, so that each codec compresses.
				if i%64 < 32 {
					src.Bytes()[i] = byte(r.IntN(256))
				} else {
					src.Bytes()[i] = v
				}
			}
			pooledDir, plainDir := t.TempDir(), t.TempDir()
			pooled, err := Create(ctx, NewDirStore(pooledDir), "", m)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Create(ctx, plainStore{NewDirStore(plainDir)}, "", m)
			if err != nil {
				t.Fatal(err)
			}
			grid := pooled.ShardShape()
			if grid == nil {
				grid = pooled.ChunkShape()
			}
			// Written a slab of shards at a time, as blocks do, so that
			// several are encoded at once.
			for z := 0; z < shape[0]; z += grid[0] {
				n := min(grid[0], shape[0]-z)
				part, _ := nd.New(nd.Float32, n, shape[1], shape[2])
				copy(part.Bytes(), src.Bytes()[z*shape[1]*shape[2]*4:])
				for _, a := range []*Array{pooled, plain} {
					if err := a.WriteRegion(ctx, []int{z, 0, 0}, part); err != nil {
						t.Fatal(err)
					}
				}
			}
			sameFiles(t, pooledDir, plainDir)

			// Every chunk read alone (whole ones decoded in place), all at
			// once, then the whole array and a box across chunks.
			reread, err := Open(ctx, NewDirStore(pooledDir), "")
			if err != nil {
				t.Fatal(err)
			}
			unit := reread.ChunkShape()
			var wg sync.WaitGroup
			for i := 0; i < shape[0]; i += unit[0] {
				for j := 0; j < shape[1]; j += unit[1] {
					for k := 0; k < shape[2]; k += unit[2] {
						wg.Add(1)
						go func() {
							defer wg.Done()
							start := []int{i, j, k}
							box := []int{min(unit[0], shape[0]-i), min(unit[1], shape[1]-j), min(unit[2], shape[2]-k)}
							checkRegion(t, reread, src, start, box)
						}()
					}
				}
			}
			wg.Wait()
			checkRegion(t, reread, src, []int{0, 0, 0}, shape)
			checkRegion(t, reread, src, []int{3, 5, 7}, []int{14, 11, 6})
		})
	}
}

// checkRegion reads the box at start of shape from a and compares it with
// src's.
func checkRegion(t *testing.T, a *Array, src nd.Array, start, shape []int) {
	dst, _ := nd.New(nd.Float32, shape...)
	for i := range dst.Bytes() {
		dst.Bytes()[i] = 0x5A // not what a read leaves
	}
	if err := a.ReadRegion(context.Background(), start, shape, dst); err != nil {
		t.Error(err)
		return
	}
	full := src.Shape
	for i := range shape[0] {
		for j := range shape[1] {
			o := ((start[0]+i)*full[1]+start[1]+j)*full[2] + start[2]
			want := src.Bytes()[o*4 : (o+shape[2])*4]
			got := dst.Bytes()[(i*shape[1]+j)*shape[2]*4 : (i*shape[1]+j+1)*shape[2]*4]
			if !bytes.Equal(got, want) {
				t.Errorf("box at %v of %v: row %d,%d differs from what was written", start, shape, i, j)
				return
			}
		}
	}
}

// sameFiles checks that two folders hold the same files with the same
// bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(a, p)
			files[rel], _ = os.ReadFile(p)
		}
		return nil
	})
	n := 0
	filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(b, p)
		got, _ := os.ReadFile(p)
		if want, ok := files[rel]; !ok || !bytes.Equal(want, got) {
			t.Errorf("%s differs between the pooled and the plain writes", rel)
		}
		n++
		return nil
	})
	if n != len(files) || n == 0 {
		t.Errorf("%d files written with the pool, %d without", len(files), n)
	}
}
