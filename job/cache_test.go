package job

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// writeZarrInput writes a as a Zarr array at path: v3 in shards of shard
// made of chunks of chunk, or v2 in chunks of shard where chunk is nil.
func writeZarrInput(t testing.TB, path string, a nd.Array, shard, chunk []int, comp string) {
	t.Helper()
	m := zarr.Meta{Shape: a.Shape, DType: a.DType(), ChunkShape: chunk, ShardShape: shard, Compressor: zarr.Compressor{Name: comp}}
	if chunk == nil {
		m.Format, m.ChunkShape, m.ShardShape = 2, shard, nil
	}
	ctx := context.Background()
	z, err := zarr.Create(ctx, zarr.NewDirStore(path), "", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteRegion(ctx, make([]int, len(a.Shape)), a); err != nil {
		t.Fatal(err)
	}
}

// TestBlockCache reads a Zarr array through the block cache as blocks do
// (boxes of whole chunks grown by a halo, in C order, clipped to the
// array) under random budgets, and checks every box against a read of
// the array itself, and that the cache served reads from whole chunks
// and from shells; every other box is read into a box of a larger array
// (ReadRegionAt), which holds it and nothing outside it changes.
func TestBlockCache(t *testing.T) {
	poisonSpares = true // a chunk given back to the pool too soon shows
	defer func() { poisonSpares = false }()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 7))
	ctx := context.Background()
	var hits, shells int64
	for i := range 12 {
		rank := 1 + rng.IntN(3)
		shape, unit := make([]int, rank), make([]int, rank)
		for d := range rank {
			unit[d] = 5 + rng.IntN(6)
			shape[d] = unit[d]*(1+rng.IntN(4)) - rng.IntN(3)
		}
		src := enginetest.RandomArray(rng, nd.Float32, shape...)
		path := filepath.Join(dir, fmt.Sprintf("c%d.zarr", i))
		comp := []string{"zstd", "blosc", ""}[i%3] // blosc and none decode into a block's rows
		if rng.IntN(2) == 0 {
			writeZarrInput(t, path, src, unit, nil, comp)
		} else {
			writeZarrInput(t, path, src, unit, unit, comp)
		}
		a, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
		if err != nil {
			t.Fatal(err)
		}
		halo := 1 + rng.IntN(2)
		c := NewChunkCache(a, halo, int64(rng.IntN(4*prod(unit)*4*8)))
		count := make([]int, rank)
		total := 1
		for d := range rank {
			count[d] = (shape[d] + unit[d] - 1) / unit[d]
			total *= count[d]
		}
		for b := range total {
			start, box := make([]int, rank), make([]int, rank)
			for d, r := rank-1, b; d >= 0; d-- {
				j := r % count[d]
				r /= count[d]
				lo := max(j*unit[d]-halo, 0)
				hi := min((j+1)*unit[d]+halo, shape[d])
				start[d], box[d] = lo, hi-lo
			}
			got, _ := nd.New(nd.Float32, box...)
			want, _ := nd.New(nd.Float32, box...)
			if b%2 == 0 {
				if err := c.ReadRegion(ctx, start, box, got); err != nil {
					t.Fatal(err)
				}
			} else {
				// Into a box of a larger array, as an edge block reads;
				// the bytes around the box are guards.
				at, big := make([]int, rank), make([]int, rank)
				for d := range rank {
					at[d] = rng.IntN(3)
					big[d] = at[d] + box[d] + rng.IntN(3)
				}
				dst, _ := nd.New(nd.Float32, big...)
				guard := bytes.Repeat([]byte{0xA5}, len(dst.Bytes()))
				copy(dst.Bytes(), guard)
				if err := c.ReadRegionAt(ctx, start, box, dst, at); err != nil {
					t.Fatal(err)
				}
				chunk.CopyBox(got.Bytes(), box, make([]int, rank), dst.Bytes(), big, at, box, 4)
				g, _ := nd.New(nd.Float32, box...)
				copy(g.Bytes(), guard)
				chunk.CopyBox(dst.Bytes(), big, at, g.Bytes(), box, make([]int, rank), box, 4)
				if !bytes.Equal(dst.Bytes(), guard) {
					t.Fatalf("array %d: ReadRegionAt %v of %v at %v of %v wrote outside its box", i, start, box, at, big)
				}
			}
			if err := a.ReadRegion(ctx, start, box, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("array %d %v (chunks %v, halo %d, budget %d, %q): the cache's box at %v of %v differs", i, shape, unit, halo, c.budget, comp, start, box)
			}
		}
		hits += c.Hits()
		shells += c.ShellHits()
	}
	if hits == 0 || shells == 0 {
		t.Fatalf("the cache served %d reads, %d from shells: the test no longer tests it", hits, shells)
	}
	t.Logf("%d reads from the cache, %d from shells", hits, shells)
}

// TestShareHoldsNoWholeChunks: a worker's share reads its halos from the
// chunks of blocks that other workers own; those must not stay in the
// cache whole (their owner never comes to this process: a 512³ job's
// worker held ~100 MB of them, which its heap and page faults paid
// for). After each share the cache holds shells only, and the shares
// write the whole output's bytes.
func TestShareHoldsNoWholeChunks(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 5)
	// A 3³ kernel: a halo of 1, thinner than half the chunks (6×5×4), so
	// that every chunk has a shell.
	k := enginetest.RandomArray(rand.New(rand.NewPCG(5, 5)), nd.Float64, 3, 3, 3)
	j.kernel = ndconv.NewKernel(k.Shape, k.Data.([]float64))
	s := j.plan(t, "in.zarr", "out.zarr")
	const workers = 8
	for i := range workers {
		// One block at a time: two in flight may both decode a chunk,
		// and the later keep it whole (memory spent, nothing wrong).
		r, err := s.OpenWith(ctx, RunOptions{InFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunShare(ctx, i, workers); err != nil {
			t.Fatal(err)
		}
		if n := r.Cache().Whole(); n != 0 {
			t.Errorf("worker %d of %d: the cache holds %d chunks whole after its share", i, workers, n)
		}
		r.Close()
	}
	if got, want := readAll(t, zarr.NewDirStore(filepath.Join(j.dir, "out.zarr"))), j.whole(t); !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the shares' output differs from the whole output")
	}
}

// TestBlockCacheConcurrent reads every block's box through one cache from
// several goroutines at once, each in its own order, under budgets that
// evict chunks while others copy from them, with every chunk given back
// to the pool overwritten: each box must equal a read of the array
// itself.
func TestBlockCacheConcurrent(t *testing.T) {
	poisonSpares = true
	defer func() { poisonSpares, testHookHit = false, nil }()
	ctx := context.Background()
	shape, unit, halo := []int{30, 27, 21}, []int{8, 8, 8}, 2
	src := enginetest.RandomArray(rand.New(rand.NewPCG(30, 8)), nd.Float32, shape...)
	path := filepath.Join(t.TempDir(), "c.zarr")
	writeZarrInput(t, path, src, unit, nil, "zstd")
	a, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
	if err != nil {
		t.Fatal(err)
	}
	boxes := haloBoxes(shape, unit, halo)
	want := make([]nd.Array, len(boxes))
	for i, b := range boxes {
		want[i], _ = nd.New(nd.Float32, b[1]...)
		if err := a.ReadRegion(ctx, b[0], b[1], want[i]); err != nil {
			t.Fatal(err)
		}
	}
	var hits int64
	for round, budget := range []int64{0, 1, 3 * 8 * 8 * 8 * 4, 1 << 30, -1} {
		testHookHit = nil
		if budget < 0 {
			// Every chunk kept whole is evicted while a read copies
			// from it.
			budget = 1 << 30
			testHookHit = func(c *ChunkCache) { c.keep(-1, &cell{bytes: c.budget + 1}) }
		}
		c := NewChunkCache(a, halo, max(budget, 1))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order := rand.New(rand.NewPCG(uint64(round), uint64(g))).Perm(len(boxes))
				for _, i := range order {
					got, _ := nd.New(nd.Float32, boxes[i][1]...)
					if err := c.ReadRegion(ctx, boxes[i][0], boxes[i][1], got); err != nil {
						t.Error(err)
						return
					}
					if !bytes.Equal(got.Bytes(), want[i].Bytes()) {
						t.Errorf("budget %d, goroutine %d: the cache's box at %v of %v differs", budget, g, boxes[i][0], boxes[i][1])
						return
					}
				}
			}()
		}
		wg.Wait()
		hits += c.Hits() - c.ShellHits()
	}
	testHookHit = nil
	if hits == 0 {
		t.Fatal("no read was served from a whole chunk: the test no longer tests it")
	}
}

// BenchmarkChunkCacheManyChunks reads an array of 8,192 chunks through the
// cache in halo'd blocks of 64 chunks, under a budget that keeps evicting:
// the cost of the cache's bookkeeping, which must not grow with the
// number of chunks it holds (an eviction once searched every cell).
func BenchmarkChunkCacheManyChunks(b *testing.B) {
	ctx := context.Background()
	shape, unit, block, halo := []int{64, 64, 128}, []int{4, 4, 4}, []int{16, 16, 16}, 1
	src := enginetest.RandomArray(rand.New(rand.NewPCG(30, 9)), nd.Uint8, shape...)
	path := filepath.Join(b.TempDir(), "c.zarr")
	writeZarrInput(b, path, src, unit, nil, "zstd")
	a, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
	if err != nil {
		b.Fatal(err)
	}
	boxes := haloBoxes(shape, block, halo)
	for b.Loop() {
		c := NewChunkCache(a, halo, 64<<10)
		for _, box := range boxes {
			got, _ := nd.New(nd.Uint8, box[1]...)
			if err := c.ReadRegion(ctx, box[0], box[1], got); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestBlockCacheDecodesOnce reads the same chunk from 8 goroutines at once,
// each a halo's rows of it, while its decode is slow: one decodes it, the
// others wait and copy from what it kept.
func TestBlockCacheDecodesOnce(t *testing.T) {
	defer func() { testHookDecode = nil }()
	testHookDecode = func() { time.Sleep(20 * time.Millisecond) }
	ctx := context.Background()
	shape, unit := []int{16, 16}, []int{8, 8}
	src := enginetest.RandomArray(rand.New(rand.NewPCG(30, 10)), nd.Float32, shape...)
	path := filepath.Join(t.TempDir(), "c.zarr")
	writeZarrInput(t, path, src, unit, nil, "zstd")
	a, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := nd.New(nd.Float32, 2, 8)
	if err := a.ReadRegion(ctx, []int{8, 0}, []int{2, 8}, want); err != nil {
		t.Fatal(err)
	}
	c := NewChunkCache(a, 2, 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _ := nd.New(nd.Float32, 2, 8)
			if err := c.ReadRegion(ctx, []int{8, 0}, []int{2, 8}, got); err != nil {
				t.Error(err)
			} else if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Error("a read of the chunk's first rows differs from the array's")
			}
		}()
	}
	wg.Wait()
	if n := c.Decoded(); n != 1 {
		t.Errorf("the chunk was decoded %d times, want 1", n)
	}
}

// haloBoxes is the start and shape of each block of a 3-D array of shape
// in blocks of block, in C order, grown by halo on every side and clipped
// to the array: the boxes blocks read.
func haloBoxes(shape, block []int, halo int) [][2][]int {
	var boxes [][2][]int
	for i := 0; i < shape[0]; i += block[0] {
		for j := 0; j < shape[1]; j += block[1] {
			for k := 0; k < shape[2]; k += block[2] {
				start, box := []int{i, j, k}, make([]int, 3)
				for d := range 3 {
					lo, hi := max(start[d]-halo, 0), min(start[d]+block[d]+halo, shape[d])
					start[d], box[d] = lo, hi-lo
				}
				boxes = append(boxes, [2][]int{start, box})
			}
		}
	}
	return boxes
}

// TestRunDecodesEachChunkOnce: a run in blocks of several chunks a side,
// its halos reaching into the neighbours' chunks and past the volume's
// edges (reflected, or wrapped to the far side), decodes every chunk of
// its input once where the cache has room, and writes the whole output's
// bytes. An edge block that read its thin reflected boxes before its own
// box decoded its edge chunks twice; a shell of every face of every
// chunk spent the budget on faces no box reads apart (a block's inner
// faces), which then evicted whole chunks kept for their owners.
func TestRunDecodesEachChunkOnce(t *testing.T) {
	ctx := context.Background()
	for _, border := range []ndconv.Border{ndconv.Reflect, ndconv.Wrap, ndconv.Nearest} {
		j := newTestJob(t, 6)
		// A 3³ kernel: a halo of 1, thinner than half the chunks (6×5×4).
		k := enginetest.RandomArray(rand.New(rand.NewPCG(6, 6)), nd.Float64, 3, 3, 3)
		j.kernel = ndconv.NewKernel(k.Shape, k.Data.([]float64))
		cfg := j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "out.zarr"))
		cfg.Options.Border = border
		s, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := s.OpenWith(ctx, RunOptions{InFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunAll(ctx); err != nil {
			t.Fatal(err)
		}
		c := r.Cache()
		if got, want := c.Decoded(), int64(c.Chunks()); got != want {
			t.Errorf("%v: %d chunks decoded, want each of the %d once", border, got, want)
		}
		faces := c.used
		g, err := r.Plan().Grid(ndconv.BlockOptions{Shape: s.Block})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		s.Close()
		want, err := ndconv.ApplyFilters(ctx, ndconv.Correlation, j.src,
			ndconv.Options{Border: border, Device: "cpu", Method: ndconv.Direct}, ndconv.KernelFilter("k", j.kernel))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, zarr.NewDirStore(filepath.Join(j.dir, "out.zarr"))); !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%v: the blocks' output differs from the whole output", border)
		}

		// The same reads keeping every face: the shells hold more.
		a, err := zarr.Open(ctx, zarr.NewDirStore(filepath.Join(j.dir, "in.zarr")), "")
		if err != nil {
			t.Fatal(err)
		}
		all := NewChunkCache(a, 1, 0)
		for i := range g.Len() {
			b := g.Block(i)
			in, _ := nd.New(a.DType(), b.Problem.InShape...)
			if err := b.Read(sourceOf(ctx, all), in, nil); err != nil {
				t.Fatal(err)
			}
		}
		if faces >= all.used {
			t.Errorf("%v: the cache held %d bytes of shells at the box edges, %d keeping every face: no fewer", border, faces, all.used)
		}
	}
}

// sourceOf reads regions through c.
func sourceOf(ctx context.Context, c *ChunkCache) chunkSource { return chunkSource{ctx, c} }

type chunkSource struct {
	ctx context.Context
	c   *ChunkCache
}

func (s chunkSource) ReadRegion(start, shape []int, dst nd.Array) error {
	return s.c.ReadRegion(s.ctx, start, shape, dst)
}

// TestCacheBudget: room for a slab of blocks' waiting chunks, twice over,
// within the floor and the ceiling.
func TestCacheBudget(t *testing.T) {
	for _, c := range []struct {
		shape, block, unit []int
		elem, inFlight     int
		want               int64
	}{
		// 2048³ uint8, 1 MiB chunks, blocks of 4 chunks a side, 8 in
		// flight: (16 + 8) faces of 16 chunks, twice.
		{[]int{2048, 2048, 2048}, []int{256, 512, 512}, []int{64, 128, 128}, 1, 8, 768 << 20},
		// 1024³ float32 in 8 MiB chunks: capped.
		{[]int{1024, 1024, 1024}, []int{256, 512, 512}, []int{128, 128, 128}, 4, 2, maxCacheBytes},
		// A small volume: the floor.
		{[]int{64, 64, 64}, []int{32, 64, 64}, []int{16, 16, 16}, 4, 2, DefaultCacheBytes},
		// One block: nothing waits.
		{[]int{64, 64}, []int{64, 64}, []int{8, 8}, 1, 1, DefaultCacheBytes},
	} {
		kshape := []int{3, 3, 3}[:len(c.shape)]
		spec := nd.Spec{Shape: c.shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rand.New(rand.NewPCG(1, 1)), true, kshape...)}}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		g, err := chunk.NewGrid(p, c.block)
		if err != nil {
			t.Fatal(err)
		}
		if got := cacheBudget(g, c.unit, c.elem, c.inFlight); got != c.want {
			t.Errorf("%v in blocks of %v, chunks of %v: budget %d MiB, want %d", c.shape, c.block, c.unit, got>>20, c.want>>20)
		}
	}
}
