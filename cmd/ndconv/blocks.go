package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// Blocks: a job whose output is Zarr, from a Zarr input or a .npy/.raw one
// that can be mapped, runs in N-D blocks (ndconv's ExecuteBlocks) aligned
// with the output's shards, so that each shard is written whole, once, and
// host memory holds the blocks in flight whatever the volume. The output's
// metadata is written first; an interrupted run leaves whole shards and
// consistent metadata, and --resume skips the blocks whose shards are all
// stored. A volume that fits one block is one block: the same work as
// reading whole, so Zarr always takes this path.
//
// NDCONV_BLOCK_BYTES bounds a block's input and output (default
// defaultBlockBytes, raised where one shard's block needs more),
// NDCONV_BLOCK_CACHE the bytes of a Zarr input's chunks kept decoded
// (cellCache) and NDCONV_BLOCKS_IN_FLIGHT the blocks computed at once,
// for tests and tuning. The defaults were chosen on a 1024³ float32 Zarr
// of 128³ chunks (docs/perf/streaming.md): 1.2 GB resident, 2.1 decodes
// per chunk.
const (
	defaultBlockBytes     = 128 << 20
	defaultBlocksInFlight = 2
	defaultBlockCache     = 384 << 20
)

// blockable reports whether the job runs in blocks: a Zarr output, from a
// Zarr input or a .npy or .raw file.
func blockable(job filterJob) bool {
	if !imageio.IsZarr(job.output) {
		return false
	}
	if imageio.IsZarr(job.input) {
		return true
	}
	ext := strings.ToLower(filepath.Ext(job.input))
	return ext == ".npy" || ext == ".raw"
}

// blockStats counts what the blocks did, from the workers at once: the
// time each stage took, summed over the workers, and the bytes read and
// written.
type blockStats struct {
	read, compute, write atomic.Int64 // nanoseconds
	in, out              atomic.Int64 // bytes
	written, skipped     atomic.Int64 // blocks
}

func (s *blockStats) add(t *atomic.Int64, since time.Time) { t.Add(int64(time.Since(since))) }

// timedSource reads regions from a Zarr array or a mapped file, counting
// the time (reading and decoding) and the bytes.
type timedSource struct {
	ctx   context.Context
	zarr  *cellCache        // or: a Zarr array's chunks
	array chunk.ArraySource // a mapped file
	stats *blockStats
}

func (s *timedSource) ReadRegion(start, shape []int, dst nd.Array) error {
	t := time.Now()
	defer s.stats.add(&s.stats.read, t)
	s.stats.in.Add(int64(len(dst.Bytes())))
	if s.zarr != nil {
		return s.zarr.ReadRegion(s.ctx, start, shape, dst)
	}
	return s.array.ReadRegion(start, shape, dst)
}

// zarrSink writes each block's output to the Zarr array, counting the time
// (encoding and writing) and the bytes. With resume, shards stored
// before the run started are not written again.
type zarrSink struct {
	ctx    context.Context
	a      *zarr.Array
	stats  *blockStats
	stored map[string]bool // with resume: the keys stored at the start
	after  func(n int64)   // called with the blocks written so far
}

func (s *zarrSink) WriteRegion(start []int, src nd.Array) (err error) {
	defer nd.RecoverPanic(&err)
	testHookPanic("sink")
	t := time.Now()
	if s.stored == nil || !s.anyStored(start, src.Shape) {
		err = s.a.WriteRegion(s.ctx, start, src)
	} else {
		err = s.writeMissing(start, src)
	}
	s.stats.add(&s.stats.write, t)
	if err != nil {
		return err
	}
	s.stats.out.Add(int64(len(src.Bytes())))
	n := s.stats.written.Add(1)
	if s.after != nil {
		s.after(n)
	}
	return nil
}

// shards calls fn for the index, start and shape of each shard of the
// box at start of shape (whose edges lie on the shard grid).
func (s *zarrSink) shards(start, shape []int, fn func(idx, lo, n []int) error) error {
	grid, full := s.a.ShardShape(), s.a.Shape()
	rank := len(start)
	first, count := make([]int, rank), make([]int, rank)
	total := 1
	for d := range rank {
		first[d] = start[d] / grid[d]
		count[d] = (start[d]+shape[d]+grid[d]-1)/grid[d] - first[d]
		total *= count[d]
	}
	for i := range total {
		idx, lo, n := make([]int, rank), make([]int, rank), make([]int, rank)
		for d, r := rank-1, i; d >= 0; d-- {
			idx[d] = first[d] + r%count[d]
			r /= count[d]
			lo[d] = idx[d] * grid[d]
			n[d] = min(grid[d], full[d]-lo[d])
		}
		if err := fn(idx, lo, n); err != nil {
			return err
		}
	}
	return nil
}

// anyStored reports whether a shard of the box was stored before the run.
func (s *zarrSink) anyStored(start, shape []int) bool {
	errFound := errors.New("found")
	return s.shards(start, shape, func(idx, _, _ []int) error {
		if s.stored[s.a.Key(idx)] {
			return errFound
		}
		return nil
	}) != nil
}

// allStored reports whether every shard of the box was stored before the
// run.
func (s *zarrSink) allStored(start, shape []int) bool {
	errMissing := errors.New("missing")
	return s.shards(start, shape, func(idx, _, _ []int) error {
		if !s.stored[s.a.Key(idx)] {
			return errMissing
		}
		return nil
	}) == nil
}

// writeMissing writes the shards of a block that were not stored before
// a resumed run: a block the interrupted run had half written.
func (s *zarrSink) writeMissing(start []int, src nd.Array) error {
	size := src.DType().Size()
	return s.shards(start, src.Shape, func(idx, lo, n []int) error {
		if s.stored[s.a.Key(idx)] {
			return nil
		}
		part, err := nd.New(src.DType(), n...)
		if err != nil {
			return err
		}
		at := make([]int, len(lo))
		for d := range lo {
			at[d] = lo[d] - start[d]
		}
		chunk.CopyBox(part.Bytes(), n, make([]int, len(n)), src.Bytes(), src.Shape, at, n, size)
		return s.a.WriteRegion(s.ctx, lo, part)
	})
}

// storedKeys lists the keys of the array's shards stored now.
func storedKeys(ctx context.Context, a *zarr.Array) (map[string]bool, error) {
	prefix := ""
	if a.Path() != "" {
		prefix = a.Path() + "/"
	}
	keys, err := a.Store().List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m, nil
}

// runBlocks carries out a job in N-D blocks. It reports false, having
// done nothing, where the input cannot be mapped or the filters cannot run
// in blocks (filters of several terms): the caller then reads the input
// whole.
func runBlocks(cmd *cobra.Command, job filterJob, specs []kernelSpec) (bool, error) {
	begin := time.Now()
	ctx, cancel := context.WithCancelCause(cmd.Context())
	defer cancel(nil)
	stats := &blockStats{}
	src := &timedSource{ctx: ctx, stats: stats}
	var (
		zarrIn *zarr.Array
		shape  []int
		dtype  nd.DType
		meta   imageio.Meta
	)
	if imageio.IsZarr(job.input) {
		a, m, err := imageio.OpenZarr(ctx, job.input)
		if err != nil {
			return true, err
		}
		zarrIn, shape, dtype, meta = a, a.Shape(), a.DType(), m
	} else {
		mapped, err := imageio.MapFile(job.input, job.raw)
		if errors.Is(err, imageio.ErrNotMappable) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		defer mapped.Close()
		src.array, shape, dtype = chunk.ArraySource{Array: mapped.Array}, mapped.Shape, mapped.DType()
	}
	fs, err := buildFilters(specs, spatialAxes(&job.opt, specs, nd.Array{Shape: shape}, meta))
	if err != nil {
		return true, err
	}
	if zarrIn != nil {
		src.zarr = newCellCache(zarrIn, haloOf(fs, job.opt.Origin), streamSetting("NDCONV_BLOCK_CACHE", defaultBlockCache))
	}
	progress := newProgress(cmd.ErrOrStderr(), job.op.String(), job.quiet)
	if progress != nil {
		progress.describe = func() string {
			return fmt.Sprintf("%s in, %s out", gigabytes(stats.in.Load()), gigabytes(stats.out.Load()))
		}
	}
	job.opt.Progress = testHookProgress(progress.reporter())
	p, err := ndconv.NewFilterPlan(job.op, shape, dtype, job.opt, fs...)
	if err != nil {
		return true, err
	}
	defer p.Close()
	if !p.Blocked() {
		return false, nil
	}
	if err := imageio.CheckDType(job.output, p.DType()); err != nil {
		return true, &usageError{err}
	}
	trace("planned on " + p.Device())
	// The output array, metadata first.
	out, err := imageio.CreateZarr(ctx, job.output, p.Shape(), p.DType(), imageio.WriteOptions{Meta: meta}, job.resume)
	if err != nil {
		return true, err
	}
	sink := &zarrSink{ctx: ctx, a: out, stats: stats}
	if job.resume {
		if sink.stored, err = storedKeys(ctx, out); err != nil {
			return true, err
		}
	}
	if n := testHookCancelBlocks(); n > 0 {
		sink.after = func(done int64) {
			if done == int64(n) {
				cancel(fmt.Errorf("testhook: cancelled after %d blocks", n))
			}
		}
	}
	g, budget, err := blockGrid(p, out)
	if err != nil {
		return true, err
	}
	rank := len(g.Shape())
	inFlight := int(streamSetting("NDCONV_BLOCKS_IN_FLIGHT", defaultBlocksInFlight))
	if job.ndevices > 1 && os.Getenv("NDCONV_BLOCKS_IN_FLIGHT") == "" {
		inFlight *= job.ndevices // each device its own blocks in flight
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The garbage of each block (decoded chunks, encoded shards) would
		// let the heap grow to twice what it holds before a collection:
		// collect sooner near what the blocks and the cache need.
		held := int64(inFlight)*budget + streamSetting("NDCONV_BLOCK_CACHE", defaultBlockCache)
		debug.SetMemoryLimit(held + held/2 + 256<<20)
	}
	bo := ndconv.BlockOptions{Shape: g.Shape(), InFlight: inFlight, Devices: job.devices,
		Computed: func(_ int, d time.Duration) { stats.compute.Add(int64(d)) }}
	if sink.stored != nil {
		counts := g.Counts()
		bo.Skip = func(i int) bool {
			if job.parts > 0 && i%job.parts != job.part {
				return true // another task's block
			}
			start, shape := make([]int, rank), make([]int, rank)
			full := p.Shape()
			for d, r := rank-1, i; d >= 0; d-- {
				start[d] = r % counts[d] * g.Shape()[d]
				r /= counts[d]
				shape[d] = min(g.Shape()[d], full[d]-start[d])
			}
			// The bank axis, when there is one, is the whole axis.
			start, shape = append(start, make([]int, len(full)-rank)...), append(shape, full[rank:]...)
			if sink.allStored(start, shape) {
				stats.skipped.Add(1)
				return true
			}
			return false
		}
	}
	testHookStage("blocks")
	err = p.ExecuteBlocks(ctx, src, sink, bo)
	progress.finish()
	if err != nil {
		if c := context.Cause(ctx); c != nil && cmd.Context().Err() == nil {
			return true, c // the test hook's cancellation
		}
		return true, err
	}
	trace("blocks done")
	if src.zarr != nil {
		trace(fmt.Sprintf("%d chunks decoded (%d in the array), %d reads from the cache", src.zarr.decoded.Load(), prod(src.zarr.count), src.zarr.hits.Load()))
	}
	if !job.quiet {
		wall := time.Since(begin)
		resumed := ""
		if job.resume {
			resumed = fmt.Sprintf(", %d stored already", stats.skipped.Load())
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %v %v -> %s %v %v: %s on %s, %d blocks of %v (%d in flight%s), %.1f ms; "+
			"in %s (%.2f GB/s), out %s (%.2f GB/s); read+decode %.1f s, compute %.1f s, encode+write %.1f s (summed over the blocks in flight)%s\n",
			job.op, dtype, shape, filepath.Base(job.output), p.DType(), p.Shape(), p.Method(), p.Device(),
			g.Len(), g.Shape(), inFlight, resumed, ms(wall),
			gigabytes(stats.in.Load()), rate(stats.in.Load(), wall), gigabytes(stats.out.Load()), rate(stats.out.Load(), wall),
			seconds(stats.read.Load()), seconds(stats.compute.Load()), seconds(stats.write.Load()), choiceNote(p))
	}
	return true, nil
}

// haloOf is the most rows a block's halo reaches past its output on any
// axis, on either side: half a kernel's extent where no origin shifts it
// (scipy's centre, K/2 before and K−1−K/2 after), else its extent less
// one.
func haloOf(fs []filters.Filter, origin []int) int {
	h := 0
	for _, f := range fs {
		for _, k := range f.Terms {
			for _, n := range k.Shape {
				if slices.ContainsFunc(origin, func(o int) bool { return o != 0 }) {
					h = max(h, n-1)
				} else {
					h = max(h, n/2)
				}
			}
		}
	}
	return h
}

// blockGrid is the grid of blocks for the plan's output, and the budget
// of a block: blocks within NDCONV_BLOCK_BYTES whose extents are whole
// shards of out, the budget doubled where one shard's block does not fit
// it.
func blockGrid(p *ndconv.FilterPlan, out *zarr.Array) (*chunk.Grid, int64, error) {
	budget := streamSetting("NDCONV_BLOCK_BYTES", defaultBlockBytes)
	var err error
	for range 48 {
		var g *chunk.Grid
		if g, err = p.Grid(ndconv.BlockOptions{Bytes: budget}); err == nil {
			// The grid spans the output without its bank axis.
			align := out.ShardShape()[:len(g.Shape())]
			if g, err = p.Grid(ndconv.BlockOptions{Bytes: budget, Align: align}); err == nil {
				return g, budget, nil
			}
		}
		budget *= 2
	}
	return nil, 0, err
}

func gigabytes(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

func rate(n int64, d time.Duration) float64 { return float64(n) / 1e9 / max(d.Seconds(), 1e-9) }

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// cellCache keeps what blocks read of a Zarr input's chunks, decoded,
// for the blocks after. A block's halo reaches a few rows into its
// neighbours' chunks, and a chunk is decoded whole: without a cache every
// chunk on a block's edge is decoded again by each neighbour (8-fold for
// 128³ chunks under 256³ blocks), and a block at the volume's edge
// decodes its reflected boxes from the same chunks again. So a chunk that
// a block decodes is kept as its shell (the halo's thickness at each
// face, all a neighbour's halo reads of it), and whole while the block
// that owns it (reads it whole) has not come yet. Once the cache holds
// more than its budget, the whole chunks least recently used go first,
// then the shells; a
// read the cache cannot serve decodes the chunk again, so the cache
// bounds memory, never correctness.
type cellCache struct {
	a      *zarr.Array
	unit   []int // a chunk's shape
	count  []int // chunks per axis
	halo   int   // the rows a halo reaches into a chunk, at most
	budget int64

	pool  sync.Pool // whole chunks decoded, for the next
	mu    sync.Mutex
	cells map[int]*cell
	used  int64
	tick  int64
	// decoded counts the chunks decoded, hits the reads the cache served
	// (shellHits from a shell).
	decoded, hits, shellHits atomic.Int64
}

// cell is what the cache holds of one chunk: the whole of it, or its
// shell.
type cell struct {
	whole nd.Array // or Data nil
	shell []slab
	bytes int64
	last  int64 // the tick of its last use
}

// slab is the rows of a chunk within the halo's thickness of one face:
// at lo (in the array), of the array data's shape.
type slab struct {
	lo   []int
	data nd.Array
}

func newCellCache(a *zarr.Array, halo int, budget int64) *cellCache {
	c := &cellCache{a: a, unit: a.ChunkShape(), halo: max(halo, 1), budget: budget, cells: map[int]*cell{}}
	for d, n := range a.Shape() {
		c.count = append(c.count, (n+c.unit[d]-1)/c.unit[d])
	}
	return c
}

// box is the start and shape of chunk idx, clipped to the array.
func (c *cellCache) box(idx []int) (lo, shape []int) {
	full := c.a.Shape()
	lo, shape = make([]int, len(idx)), make([]int, len(idx))
	for d := range idx {
		lo[d] = idx[d] * c.unit[d]
		shape[d] = min(c.unit[d], full[d]-lo[d])
	}
	return lo, shape
}

// spare returns an array of shape from the pool, or a new one.
func (c *cellCache) spare(shape []int) nd.Array {
	if a, ok := c.pool.Get().(*nd.Array); ok && slices.Equal(a.Shape, shape) {
		return *a
	}
	a, _ := nd.New(c.a.DType(), shape...) // a chunk's size is checked by Open
	return a
}

// ReadRegion fills dst with the box at start of shape, from the chunks it
// meets, on several cores.
func (c *cellCache) ReadRegion(ctx context.Context, start, shape []int, dst nd.Array) error {
	rank := len(start)
	first, n := make([]int, rank), make([]int, rank)
	total := 1
	for d := range rank {
		if shape[d] == 0 {
			return nil
		}
		first[d] = start[d] / c.unit[d]
		n[d] = (start[d]+shape[d]-1)/c.unit[d] - first[d] + 1
		total *= n[d]
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range min(total, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= total {
					return
				}
				idx := make([]int, rank)
				for d, r := rank-1, k; d >= 0; d-- {
					idx[d] = first[d] + r%n[d]
					r /= n[d]
				}
				if err := c.copyCell(ctx, idx, start, shape, dst); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// copyCell copies the part of chunk idx inside the box at start of shape
// into dst: from the cache where it holds that part, else decoding the
// chunk (and keeping it).
func (c *cellCache) copyCell(ctx context.Context, idx, start, shape []int, dst nd.Array) error {
	rank := len(idx)
	lo, cshape := c.box(idx)
	wlo, w := make([]int, rank), make([]int, rank)
	covered := true
	for d := range rank {
		a := max(start[d], lo[d])
		b := min(start[d]+shape[d], lo[d]+cshape[d])
		wlo[d], w[d] = a, b-a
		covered = covered && w[d] == cshape[d]
	}
	put := func(src nd.Array, srcLo []int) {
		at, from := make([]int, rank), make([]int, rank)
		for d := range rank {
			at[d], from[d] = wlo[d]-start[d], wlo[d]-srcLo[d]
		}
		chunk.CopyBox(dst.Bytes(), shape, at, src.Bytes(), src.Shape, from, w, dst.DType().Size())
	}
	lin := 0
	for d := range rank {
		lin = lin*c.count[d] + idx[d]
	}
	c.mu.Lock()
	c.tick++
	if e := c.cells[lin]; e != nil {
		e.last = c.tick
		if whole := e.whole; whole.Data != nil {
			if covered {
				// Its owner reads it now: the shell is all that is left
				// to read.
				e.whole = nd.Array{}
				e.bytes -= int64(len(whole.Bytes()))
				c.used -= int64(len(whole.Bytes()))
			}
			c.mu.Unlock()
			c.hits.Add(1)
			put(whole, lo)
			return nil
		}
		for _, sl := range e.shell {
			if inside(wlo, w, sl.lo, sl.data.Shape) {
				c.mu.Unlock()
				c.hits.Add(1)
				c.shellHits.Add(1)
				put(sl.data, sl.lo)
				return nil
			}
		}
	}
	c.mu.Unlock()
	c.decoded.Add(1)
	data := c.spare(cshape)
	if err := c.a.ReadRegion(ctx, lo, cshape, data); err != nil {
		c.pool.Put(&data)
		return err
	}
	put(data, lo)
	e := &cell{shell: c.shellOf(data, lo)}
	for _, sl := range e.shell {
		e.bytes += int64(len(sl.data.Bytes()))
	}
	if covered {
		c.pool.Put(&data)
	} else {
		// Its owner, a block still to come, reads it whole.
		e.whole = data
		e.bytes += int64(len(data.Bytes()))
	}
	c.keep(lin, e)
	return nil
}

// inside reports whether the box at lo of shape lies inside the box at
// olo of oshape.
func inside(lo, shape, olo, oshape []int) bool {
	for d := range lo {
		if lo[d] < olo[d] || lo[d]+shape[d] > olo[d]+oshape[d] {
			return false
		}
	}
	return true
}

// shellOf cuts the slabs of a chunk (data, at lo) within the halo's
// thickness of each face: two per axis, or none along an axis the halo
// spans half of (a read there takes the chunk whole).
func (c *cellCache) shellOf(data nd.Array, lo []int) []slab {
	rank := len(lo)
	var shell []slab
	for d := range rank {
		if 2*c.halo >= data.Shape[d] {
			return nil // the shell would be the chunk
		}
		for _, off := range []int{0, data.Shape[d] - c.halo} {
			shape := slices.Clone(data.Shape)
			shape[d] = c.halo
			at := make([]int, rank)
			at[d] = off
			s, _ := nd.New(data.DType(), shape...)
			chunk.CopyBox(s.Bytes(), shape, make([]int, rank), data.Bytes(), data.Shape, at, shape, data.DType().Size())
			slo := slices.Clone(lo)
			slo[d] += off
			shell = append(shell, slab{lo: slo, data: s})
		}
	}
	return shell
}

// keep stores entry e of chunk lin, evicting the entries least recently
// used while the cache holds more than its budget.
func (c *cellCache) keep(lin int, e *cell) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.cells[lin]; old != nil {
		c.used -= old.bytes // another block decoded it at the same time
	}
	e.last = c.tick
	c.cells[lin] = e
	c.used += e.bytes
	// Over budget, whole chunks go first (their shells stay), the least
	// recently used first, and then shells: a shell serves every
	// neighbour's halo, a whole chunk only its owner's read.
	for _, wholeOnly := range []bool{true, false} {
		for c.used > c.budget {
			victim, oldest := -1, int64(0)
			for j, f := range c.cells {
				if (!wholeOnly || f.whole.Data != nil) && (victim < 0 || f.last < oldest) {
					victim, oldest = j, f.last
				}
			}
			if victim < 0 {
				break
			}
			v := c.cells[victim]
			if wholeOnly {
				n := int64(len(v.whole.Bytes()))
				v.whole = nd.Array{}
				v.bytes -= n
				c.used -= n
				continue
			}
			c.used -= v.bytes
			delete(c.cells, victim)
		}
	}
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
