package job

import (
	"container/list"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// DefaultCacheBytes is a ChunkCache's budget when none is given: chosen
// on a 1024³ float32 Zarr of 128³ chunks (docs/perf/streaming.md).
const DefaultCacheBytes = 384 << 20

// ChunkCache keeps what blocks read of a Zarr input's chunks, decoded,
// for the blocks after. A block's halo reaches a few rows into its
// neighbours' chunks, and a chunk is decoded whole: without a cache every
// chunk on a block's edge is decoded again by each neighbour (8-fold for
// 128³ chunks under 256³ blocks), and a block at the volume's edge
// decodes its reflected boxes from the same chunks again. So a chunk that
// a block decodes is kept as its shell (the halo's thickness at each
// face, all a neighbour's halo reads of it), and whole while the block
// that owns it (reads it whole) has not come yet. Once the cache holds
// more than its budget, the whole chunks least recently used go first,
// then the shells; a read the cache cannot serve decodes the chunk again, so the cache
// bounds memory, never correctness.
type ChunkCache struct {
	a      *zarr.Array
	shape  []int // the array's
	unit   []int // a chunk's shape
	count  []int // chunks per axis
	halo   int   // the rows a halo reaches into a chunk, at most (0: none)
	budget int64
	// owned reports whether a block still to come reads the chunk at lo
	// of shape whole (nil: any may).
	owned func(lo, shape []int) bool
	// starts and ends list, per axis and in increasing order, the rows
	// where the blocks' input boxes begin and end (SetBoxEdges); nil
	// keeps every face of a chunk's shell.
	starts, ends [][]int

	pool  sync.Pool // whole chunks decoded, for the next
	mu    sync.Mutex
	cells map[int]*cell
	used  int64
	// lru orders the cells from least to most recently used, and wholes
	// those holding their chunk whole, so that an eviction takes the
	// front, not a search of every cell (8,192 of them for a 2048³ uint8
	// volume of 1 MiB chunks, searched under the lock once per chunk
	// decoded: the blocks in flight took turns at it).
	lru, wholes list.List // of *cell
	// decoding holds the chunks a read is decoding now, each until what
	// is kept of it is in cells: a block in flight that needs the same
	// chunk (its neighbour's, for its halo, or its own that a neighbour's
	// halo reached first) waits for it instead of decoding it too.
	decoding map[int]chan struct{}
	// decoded counts the chunks decoded, hits the reads the cache served
	// (shellHits from a shell).
	decoded, hits, shellHits atomic.Int64
}

// cell is what the cache holds of one chunk: the whole of it, or its
// shell.
type cell struct {
	lin   int   // the chunk's index in C order (keep sets it)
	whole *held // or nil
	shell []slab
	bytes int64
	// at and wholeAt are the cell's places in the cache's lru and wholes
	// lists (wholeAt nil where it holds no whole chunk).
	at, wholeAt *list.Element
}

// held is a chunk kept whole, and the reads copying from it now: once
// dropped from its cell (read by its owner, or evicted), it goes back to
// the pool of spares when the last of them is done, not before.
type held struct {
	data    nd.Array
	readers int
	dropped bool
}

// release ends a read of h (under c.mu), giving h back to the pool if it
// was dropped meanwhile and this was its last reader.
func (c *ChunkCache) release(h *held) {
	h.readers--
	c.drop(h)
}

// drop gives h's array back to the pool once dropped and unread (under
// c.mu).
func (c *ChunkCache) drop(h *held) {
	if h.dropped && h.readers == 0 {
		c.putSpare(h.data)
		h.data = nd.Array{}
	}
}

// slab is the rows of a chunk within the halo's thickness of one face:
// at lo (in the array), of the array data's shape.
type slab struct {
	lo   []int
	data nd.Array
}

// NewChunkCache returns a cache of a's chunks for blocks whose halo
// reaches halo rows past their output, holding about budget bytes
// (DefaultCacheBytes when 0).
func NewChunkCache(a *zarr.Array, halo int, budget int64) *ChunkCache {
	if budget == 0 {
		budget = DefaultCacheBytes
	}
	c := &ChunkCache{a: a, shape: a.Shape(), unit: a.ChunkShape(), halo: max(halo, 0), budget: budget, cells: map[int]*cell{}, decoding: map[int]chan struct{}{}}
	for d, n := range c.shape {
		c.count = append(c.count, (n+c.unit[d]-1)/c.unit[d])
	}
	return c
}

// SetOwners tells the cache which chunks a block still to come reads
// whole (owned reports it for the chunk at lo of shape): only those are
// kept whole when a neighbour's halo decodes them first; the others keep
// their shell only. A worker that runs a share of the blocks would
// otherwise hold every chunk its halos reach in the other workers'
// blocks, whole, until the budget is spent. (A chunk too thin to have a
// shell is still kept whole: its whole is what serves the halos.) Nil
// (the default) keeps any
// chunk whole until a read covers it. Call it between runs, not during
// one.
func (c *ChunkCache) SetOwners(owned func(lo, shape []int) bool) { c.owned = owned }

// SetBoxEdges tells the cache where the blocks' input boxes begin and end
// on each axis (starts[d] and ends[d], rows of the array, in increasing
// order), so that a shell keeps only the faces a box's edge falls in: a
// halo read ends within a chunk's first rows or begins within its last,
// and the faces inside a block (most of them, for blocks of several
// chunks a side) are never read apart from the chunk. Without them, every
// face is kept: on a 2048³ volume of 1 MiB chunks in blocks of 4 chunks a
// side, the faces of every chunk took half the cache's budget, and the
// chunks kept whole for their owners were evicted and decoded again (12,821
// decodes of 8,192 chunks). Call it before a run, not during one.
func (c *ChunkCache) SetBoxEdges(starts, ends [][]int) {
	if len(starts) != len(c.shape) || len(ends) != len(c.shape) {
		c.starts, c.ends = nil, nil
		return
	}
	c.starts, c.ends = starts, ends
}

// faceRead reports whether a box may read the face of the chunk at lo of
// extent n along axis d apart from the rest of it: the low face where a
// box ends within its first halo rows, the high face where one begins
// within its last.
func (c *ChunkCache) faceRead(d, lo, n int, high bool) bool {
	if c.starts == nil {
		return true
	}
	if high {
		first := lo + n - c.halo
		i, _ := slices.BinarySearch(c.starts[d], first)
		return i < len(c.starts[d]) && c.starts[d][i] < lo+n
	}
	i, _ := slices.BinarySearch(c.ends[d], lo+1)
	return i < len(c.ends[d]) && c.ends[d][i] <= lo+c.halo
}

// box is the start and shape of chunk idx, clipped to the array.
func (c *ChunkCache) box(idx []int) (lo, shape []int) {
	lo, shape = make([]int, len(idx)), make([]int, len(idx))
	for d := range idx {
		lo[d] = idx[d] * c.unit[d]
		shape[d] = min(c.unit[d], c.shape[d]-lo[d])
	}
	return lo, shape
}

// spare returns an array of shape from the pool (its contents arbitrary),
// or a new one.
func (c *ChunkCache) spare(shape []int) nd.Array {
	if a, ok := c.pool.Get().(*nd.Array); ok && slices.Equal(a.Shape, shape) {
		return *a
	}
	a, _ := nd.New(c.a.DType(), shape...) // a chunk's size is checked by Open
	return a
}

// poisonSpares, set by tests, overwrites each array given back to the
// pool, so that a read of one after its release shows at once.
var poisonSpares bool

// testHookHit, set by tests, runs between a read's taking a chunk kept
// whole and its copy from it (to evict the chunk there).
var testHookHit func(c *ChunkCache)

// testHookDecode, set by tests, runs before each decode of a chunk.
var testHookDecode func()

// putSpare gives a back to the pool: nothing reads it any more.
func (c *ChunkCache) putSpare(a nd.Array) {
	if poisonSpares {
		b := a.Bytes()
		for i := range b {
			b[i] = 0xA5
		}
	}
	c.pool.Put(&a)
}

// ReadRegion fills dst with the box at start of shape, from the chunks it
// meets, on several cores.
func (c *ChunkCache) ReadRegion(ctx context.Context, start, shape []int, dst nd.Array) error {
	return c.ReadRegionAt(ctx, start, shape, dst, make([]int, len(start)))
}

// ReadRegionAt is ReadRegion into the box at `at` of dst, a larger array
// (a block's input, where an edge block reads several boxes): a chunk the
// box holds whole, not in the cache, is decoded straight into dst's rows
// (zarr.Array.ReadRegionAt) and its shell cut from there.
func (c *ChunkCache) ReadRegionAt(ctx context.Context, start, shape []int, dst nd.Array, at []int) error {
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
	// The chunks the box holds whole first, the ones its edges cut (its
	// halo's, mostly) after: those are the neighbouring blocks' own
	// chunks, which the neighbours in flight decode at the same time, and
	// a block that read them in C order among its own waited at every
	// other chunk for the neighbour decoding it, which waited for its own
	// neighbour (2048³ on 64 cores: reading a block took 4× as long with
	// a halo as without, 8 in flight, and 10× with 24).
	cells := make([][]int, 0, total) // the chunks' grid indices, in that order
	idx := make([]int, rank)
	for pass := range 2 {
		for k := range total {
			inner := true
			for d, r := rank-1, k; d >= 0; d-- {
				idx[d] = first[d] + r%n[d]
				lo := idx[d] * c.unit[d]
				inner = inner && lo >= start[d] && min(lo+c.unit[d], c.shape[d]) <= start[d]+shape[d]
				r /= n[d]
			}
			if inner == (pass == 0) {
				cells = append(cells, slices.Clone(idx))
			}
		}
	}
	var failed atomic.Pointer[error]
	if err := nd.ForEach(readWorkers(), total, func() bool { return failed.Load() != nil }, func(_, i int) {
		if err := c.copyCell(ctx, cells[i], start, shape, dst, at); err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	}); err != nil {
		return err
	}
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// readWorkers is how many chunks one ReadRegion reads at once: a quarter
// of the cores (at least 4). Blocks in flight read at the same time, and
// each chunk read takes the cache's lock twice; with one reader a core for
// each of 8 blocks, 512 goroutines queued on the lock on a 64-core host,
// each handed it while waiting for a core (the collector's and the
// encoders' work holding them), and the goroutines spent 60 s a second
// waiting there (an execution trace of the 2048³ Zarr run on four GPUs).
func readWorkers() int { return max(4, runtime.GOMAXPROCS(0)/4) }

// copyCell copies the part of chunk idx inside the box at start of shape
// into the box at `at` of dst: from the cache where it holds that part,
// else decoding the chunk (and keeping it).
func (c *ChunkCache) copyCell(ctx context.Context, idx, start, shape []int, dst nd.Array, at []int) error {
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
	// wat is where the part goes in dst.
	wat := make([]int, rank)
	for d := range rank {
		wat[d] = at[d] + wlo[d] - start[d]
	}
	put := func(src nd.Array, srcLo []int) {
		from := make([]int, rank)
		for d := range rank {
			from[d] = wlo[d] - srcLo[d]
		}
		chunk.CopyBox(dst.Bytes(), dst.Shape, wat, src.Bytes(), src.Shape, from, w, dst.DType().Size())
	}
	lin := 0
	for d := range rank {
		lin = lin*c.count[d] + idx[d]
	}
	c.mu.Lock()
	for {
		if c.serve(lin, covered, wlo, w, lo, put) {
			return nil // (c.mu unlocked)
		}
		busy, ok := c.decoding[lin]
		if !ok {
			break
		}
		// Another block is decoding the chunk now: its result, kept,
		// serves this read too (or, kept as a shell this read is not
		// inside, this read decodes it again).
		c.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.mu.Lock()
	}
	done := make(chan struct{})
	c.decoding[lin] = done
	c.mu.Unlock()
	kept := false
	defer func() {
		if !kept { // keep did not run: the decode failed
			c.mu.Lock()
			delete(c.decoding, lin)
			c.mu.Unlock()
		}
		close(done)
	}()
	c.decoded.Add(1)
	if testHookDecode != nil {
		testHookDecode()
	}
	if covered {
		// Its owner's read, which keeps no whole chunk: decoded straight
		// into dst, the shell cut from there.
		if err := c.a.ReadRegionAt(ctx, lo, cshape, dst, wat); err != nil {
			return err
		}
		c.keep(lin, c.shellCell(dst, wat, cshape, lo))
		kept = true
		return nil
	}
	data := c.spare(cshape)
	if err := c.a.ReadRegion(ctx, lo, cshape, data); err != nil {
		c.putSpare(data)
		return err
	}
	put(data, lo)
	e := c.shellCell(data, make([]int, rank), cshape, lo)
	if e.shell != nil && c.owned != nil && !c.owned(lo, cshape) {
		c.putSpare(data)
	} else {
		// Its owner, a block still to come, reads it whole.
		e.whole = &held{data: data}
		e.bytes += int64(len(data.Bytes()))
	}
	c.keep(lin, e)
	kept = true
	return nil
}

// serve copies the part of chunk lin inside the box wlo of shape w from
// what the cache holds of it, if it holds that part: then it returns true
// with c.mu unlocked; else false with c.mu still held. covered says that
// the read takes the whole chunk (its owner's read).
func (c *ChunkCache) serve(lin int, covered bool, wlo, w, lo []int, put func(src nd.Array, srcLo []int)) bool {
	e := c.cells[lin]
	if e == nil {
		return false
	}
	c.touch(e)
	if h := e.whole; h != nil {
		h.readers++
		if covered {
			// Its owner reads it now: the shell is all that is left to
			// read; the array goes back to the pool after the copies
			// from it.
			c.unwhole(e)
		}
		c.mu.Unlock()
		if testHookHit != nil {
			testHookHit(c)
		}
		c.hits.Add(1)
		put(h.data, lo)
		c.mu.Lock()
		c.release(h)
		c.mu.Unlock()
		return true
	}
	for _, sl := range e.shell {
		if inside(wlo, w, sl.lo, sl.data.Shape) {
			c.mu.Unlock()
			c.hits.Add(1)
			c.shellHits.Add(1)
			put(sl.data, sl.lo)
			return true
		}
	}
	return false
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

// shellCell is the cell of the chunk at lo of shape cshape, held at from
// in src, that keeps its shell.
func (c *ChunkCache) shellCell(src nd.Array, from, cshape, lo []int) *cell {
	e := &cell{shell: c.shellOf(src, from, cshape, lo)}
	for _, sl := range e.shell {
		e.bytes += int64(len(sl.data.Bytes()))
	}
	return e
}

// shellOf cuts the slabs of a chunk (at lo, of shape cshape, held at
// from in src) within the halo's
// thickness of each face a box reads apart from the chunk (faceRead): up
// to two per axis; nil (the chunk kept whole or not at all, never cut)
// along an axis the halo spans half of (a read there takes the chunk
// whole) and without a halo, and empty where no face is read apart. The
// slabs share one allocation (and their boxes another): a chunk decoded
// on each of many cores at once allocating six of each made the
// collector's sweeping, which small allocations pay for, most of a block
// run's CPU time on 64 cores.
func (c *ChunkCache) shellOf(src nd.Array, from, cshape, lo []int) []slab {
	rank := len(lo)
	if c.halo == 0 {
		return nil
	}
	var faces [][2]int // axis and offset in the chunk of each slab kept
	elems := 0
	for d := range rank {
		n := cshape[d]
		if 2*c.halo >= n {
			return nil // the shell would be the chunk
		}
		for side, off := range []int{0, n - c.halo} {
			if c.faceRead(d, lo[d], n, side == 1) {
				faces = append(faces, [2]int{d, off})
				elems += c.halo * prod(cshape) / n
			}
		}
	}
	shell := make([]slab, 0, len(faces))
	if len(faces) == 0 {
		return shell
	}
	all, _ := nd.New(src.DType(), elems)
	ints := make([]int, len(faces)*3*rank) // each slab's shape, origin in src and lo
	zero := make([]int, rank)
	next := 0
	for _, f := range faces {
		d, off := f[0], f[1]
		shape, at, slo := ints[:rank:rank], ints[rank:2*rank:2*rank], ints[2*rank:3*rank:3*rank]
		ints = ints[3*rank:]
		copy(shape, cshape)
		shape[d] = c.halo
		copy(at, from)
		at[d] += off
		copy(slo, lo)
		slo[d] += off
		n := c.halo * prod(cshape) / cshape[d]
		s := nd.Array{Shape: shape, Data: nd.SliceData(all.Data, next, next+n)}
		next += n
		chunk.CopyBox(s.Bytes(), shape, zero, src.Bytes(), src.Shape, at, shape, src.DType().Size())
		shell = append(shell, slab{lo: slo, data: s})
	}
	return shell
}

// keep stores entry e of chunk lin, evicting the entries least recently
// used while the cache holds more than its budget, and ends the chunk's
// decoding (its waiters, woken after, find e): one hold of c.mu for
// both, which every chunk decoded takes.
func (c *ChunkCache) keep(lin int, e *cell) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.decoding, lin)
	if old := c.cells[lin]; old != nil {
		// Another block decoded it at the same time.
		if old.whole != nil {
			c.drop(c.unwhole(old))
		}
		c.remove(old)
	}
	e.lin = lin
	c.cells[lin] = e
	c.used += e.bytes
	e.at = c.lru.PushBack(e)
	if e.whole != nil {
		e.wholeAt = c.wholes.PushBack(e)
	}
	// Over budget, whole chunks go first (their shells stay), the least
	// recently used first, and then shells: a shell serves every
	// neighbour's halo, a whole chunk only its owner's read.
	for c.used > c.budget && c.wholes.Len() > 0 {
		c.drop(c.unwhole(c.wholes.Front().Value.(*cell))) // now, or after the reads copying from it
	}
	for c.used > c.budget && c.lru.Len() > 0 {
		c.remove(c.lru.Front().Value.(*cell))
	}
}

// touch marks e used now (under c.mu).
func (c *ChunkCache) touch(e *cell) {
	c.lru.MoveToBack(e.at)
	if e.wholeAt != nil {
		c.wholes.MoveToBack(e.wholeAt)
	}
}

// unwhole takes e's whole chunk out of the cache, leaving its shell
// (under c.mu), and returns it marked dropped: it goes back to the pool
// when its last read is done (drop, release).
func (c *ChunkCache) unwhole(e *cell) *held {
	h := e.whole
	n := int64(len(h.data.Bytes()))
	e.bytes -= n
	c.used -= n
	e.whole, h.dropped = nil, true
	c.wholes.Remove(e.wholeAt)
	e.wholeAt = nil
	return h
}

// remove takes e, holding no whole chunk, out of the cache (under c.mu).
func (c *ChunkCache) remove(e *cell) {
	c.used -= e.bytes
	c.lru.Remove(e.at)
	delete(c.cells, e.lin)
}

// Decoded is the number of chunks the cache decoded, Hits the reads it
// served, ShellHits those served from a chunk's shell.
func (c *ChunkCache) Decoded() int64   { return c.decoded.Load() }
func (c *ChunkCache) Hits() int64      { return c.hits.Load() }
func (c *ChunkCache) ShellHits() int64 { return c.shellHits.Load() }

// Whole is the number of chunks the cache holds whole now.
func (c *ChunkCache) Whole() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wholes.Len()
}

// Budget is the bytes the cache holds at most (about).
func (c *ChunkCache) Budget() int64 { return c.budget }

// Chunks is the number of chunks in the array.
func (c *ChunkCache) Chunks() int { return prod(c.count) }

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
